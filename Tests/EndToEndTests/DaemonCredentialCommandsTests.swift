import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing

/// `coinwatchd keys …` and `coinwatchd devices reset` as an operator runs them, and the secret a device's first
/// save is issued by a running server.
@Suite("coinwatchd credential commands", .serialized)
struct DaemonCredentialCommandsTests {
    /// The one line of output that is a token of `prefix` (`cwk_`, `cwd_`).
    static func token(_ prefix: String, in output: String) -> String? {
        let lines = output.split(separator: "\n").filter { $0.hasPrefix(prefix) }
        return lines.count == 1 ? String(lines[0]) : nil
    }

    @Test("keys create, list, revoke and devices reset work on a stopped server's data directory")
    func lifecycle() throws {
        let data = try TemporaryDirectory()
        let store = data.path + "/store"
        let created = try ServerProcess.run(["keys", "create", "--scope", "prices:read,settings:read", "--scope", "admin",
                                             "--name", "ops", "--data", store])
        #expect(created.status == 0, "output: \(created.output)")
        let token = try #require(Self.token("cwk_", in: created.output), "output: \(created.output)")
        let id = String(token.dropFirst(4).prefix(16))
        #expect(created.output.contains("created key \(id) (ops) with settings:read,prices:read,admin"))

        let listed = try ServerProcess.run(["keys", "list", "--data", store])
        #expect(listed.status == 0)
        #expect(listed.output.contains("\(id)  ops   settings:read,prices:read,admin"), "output: \(listed.output)")
        #expect(!listed.output.contains(token))

        let revoked = try ServerProcess.run(["keys", "revoke", id, "--data", store])
        #expect(revoked.status == 0 && revoked.output.contains("revoked key \(id)"), "output: \(revoked.output)")
        #expect(!(try ServerProcess.run(["keys", "list", "--data", store]).output.contains(id)))
        #expect(try ServerProcess.run(["keys", "list", "--all", "--data", store]).output.contains(id))

        let reset = try ServerProcess.run(["devices", "reset", "PHONE-1", "--issue-secret", "--data", store])
        #expect(reset.status == 0, "output: \(reset.output)")
        #expect(Self.token("cwd_", in: reset.output) != nil)
        #expect(reset.output.contains("device PHONE-1: it had no secret; the new secret above is shown only now"))
        let forgotten = try ServerProcess.run(["devices", "reset", "PHONE-1", "--data", store])
        #expect(forgotten.output.contains("its secret was forgotten"), "output: \(forgotten.output)")
    }

    @Test("a mistake is a usage error of the credential commands", arguments: [
        (["keys", "create", "--data", "X"], "error: --scope: a key needs at least one scope"),
        (["keys", "create", "--scope", "root", "--data", "X"], "error: --scope: unknown scope 'root'"),
        (["keys", "revoke", "--data", "X"], "error: keys revoke takes one key id"),
        (["keys", "frob", "--data", "X"], "error: unknown command 'keys frob'"),
        (["devices", "reset", "bad id", "--data", "X"], "error: device: must be 1–128 characters"),
        (["keys", "list", "--listen", "x", "--data", "X"], "error: unknown option '--listen'"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let data = try TemporaryDirectory()
        let result = try ServerProcess.run(arguments.map { $0 == "X" ? data.path + "/store" : $0 })
        #expect(result.status == 64, "output: \(result.output)")
        #expect(result.output.hasPrefix(message), "output: \(result.output)")
        #expect(result.output.contains("USAGE: coinwatchd keys create"))
        #expect(!FileManager.default.fileExists(atPath: data.path + "/store"))
    }

    @Test("listing or revoking in a directory with no store says so and creates nothing")
    func noStore() throws {
        let data = try TemporaryDirectory()
        for command in [["keys", "list"], ["keys", "revoke", "0123456789abcdef"], ["devices", "reset", "phone"]] {
            let result = try ServerProcess.run(command + ["--data", data.path + "/store"])
            #expect(result.status == 1)
            #expect(result.output.contains("coinwatchd: there is no store in \(data.path)/store"), "output: \(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: data.path + "/store"))
    }

    @Test("while a server runs on the directory the commands point at the Admin RPCs; a key made before start is kept")
    func serverRunning() async throws {
        let data = try TemporaryDirectory()
        let created = try await ServerProcess.run(["keys", "create", "--scope", "admin", "--data", data.path + "/db"])
        let token = try #require(Self.token("cwk_", in: created.output))
        let server = try await ServerProcess.start(dataDirectory: data)
        defer { server.stopInBackground() }
        let result = try await ServerProcess.run(["keys", "list", "--data", data.path + "/db"])
        #expect(result.status == 1)
        #expect(result.output.contains("coinwatchd is running on \(data.path)/db"), "output: \(result.output)")
        #expect(result.output.contains("coinwatch.v1.Admin RPCs"))
        await server.stop()
        let after = try await ServerProcess.run(["keys", "list", "--data", data.path + "/db"])
        #expect(after.output.contains(String(token.dropFirst(4).prefix(16))), "output: \(after.output)")
    }

    @Test("a running server issues a device its secret on its first save, once")
    func firstSaveIssuesSecret() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let group = try EventLoopGroup(threads: 1, namePrefix: "claims-e2e")
        defer { group.syncShutdownGracefully() }
        let connection = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
        defer { connection.close() }
        let request = V1.SaveSettingsRequest(deviceID: "phone-7", setRules: ["BTC": V1.AlertRule(above: V1.Decimal(mantissa: 7, scale: 0))])
        let first = try await connection.unary(V1.CoinWatch.saveSettings, request)
        #expect(first.deviceSecret.hasPrefix("cwd_"))
        let second = try await connection.unary(V1.CoinWatch.saveSettings, request)
        #expect(second.deviceSecret.isEmpty)
        #expect(!server.log.contains(first.deviceSecret))
    }

    @Test("devices reset on the directory of a crashed server sticks: the next start does not bring the old secret back")
    func resetAfterCrash() async throws {
        let server = try await ServerProcess.start(arguments: ["--auth", "required"])
        let group = try EventLoopGroup(threads: 1, namePrefix: "claims-e2e")
        defer { group.syncShutdownGracefully() }
        let anonymous = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
        // The first save's secret is in the settings journal, which a crash leaves unreplayed.
        let saved = try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "phone-8"))
        anonymous.close()
        #expect(saved.deviceSecret.hasPrefix("cwd_"))
        server.crash()

        let store = server.dataDirectory.path + "/db"
        let reset = try await ServerProcess.run(["devices", "reset", "phone-8", "--data", store])
        #expect(reset.status == 0, "output: \(reset.output)")
        #expect(reset.output.contains("device phone-8: its secret was forgotten"), "output: \(reset.output)")

        // A start replays the journal; a secret it brought back would be loaded by the start after.
        try await ServerProcess.start(dataDirectory: server.dataDirectory, arguments: ["--auth", "required"]).stop()
        let restarted = try await ServerProcess.start(dataDirectory: server.dataDirectory, arguments: ["--auth", "required"])
        defer { restarted.stopInBackground() }
        var options = RPCClientConnection.Options()
        options.authToken = saved.deviceSecret
        let phone = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: restarted.port, on: group.next(), options: options)
        defer { phone.close() }
        let error = await #expect(throws: RPCError.self, "the reset secret works again") {
            try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-8"))
        }
        #expect(error?.code == .unauthenticated)
    }
}
