import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// A full run of a server with authorisation required and every log level on: every key and device secret it
/// issued, and the publish token, must appear neither in its log nor in any error message a caller got.
@Suite("secrets never logged", .serialized)
struct SecretsNeverLoggedTests {
    @Test("no token or secret issued during a run appears in the server's log or in an error message")
    func noSecretInLogs() async throws {
        let data = try TemporaryDirectory(prefix: "secrets")
        let created = try await ServerProcess.run(["keys", "create", "--scope", "admin", "--data", data.path + "/db"])
        let admin = try #require(created.output.split(separator: "\n").first { $0.hasPrefix("cwk_") }.map(String.init))
        let publishToken = "publish-" + UUID().uuidString
        let server = try await ServerProcess.start(
            dataDirectory: data,
            arguments: ["--auth", "required", "--log-level", "trace", "--publish-token", publishToken])
        defer { server.stopInBackground() }
        let group = try EventLoopGroup(threads: 1, namePrefix: "secrets")
        defer { group.syncShutdownGracefully() }
        var options = RPCClientConnection.Options()
        options.authToken = admin
        let adminConnection = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: group.next(), options: options)
        defer { adminConnection.close() }
        let anonymous = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
        defer { anonymous.close() }

        var secrets = [admin, publishToken]
        var messages: [String] = []
        func refused(_ body: () async throws -> Void) async {
            do {
                try await body()
            } catch let error as RPCError {
                messages.append(error.message)
            } catch {
                messages.append("\(error)")
            }
        }
        // Keys: made, used, used wrongly, revoked, used after revocation.
        for scopes in [["settings:read", "settings:write"], ["prices:publish"], ["alerts:read"]] {
            let made = try await adminConnection.unary(V1.Admin.createKey, V1.CreateKeyRequest(name: "k", scopes: scopes))
            secrets.append(made.token)
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"),
                                              metadata: ["authorization": "Bearer " + made.token])
            }
            // The right id with a wrong secret, and the secret under another id.
            let id = made.token.prefix(21)
            let secret = made.token.dropFirst(21)
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(),
                                              metadata: ["authorization": id + String(secret.reversed())])
            }
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(),
                                              metadata: ["authorization": "Bearer cwk_ffffffffffffffff_" + secret])
            }
            _ = try await adminConnection.unary(V1.Admin.revokeKey, V1.RevokeKeyRequest(id: String(made.token.dropFirst(4).prefix(16))))
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(),
                                              metadata: ["authorization": made.token])
            }
        }
        // Device secrets: claimed, used, used for another device, forged, reset and reissued.
        for device in ["phone-1", "phone-2"] {
            let saved = try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: device))
            secrets.append(saved.deviceSecret)
            _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: device),
                                          metadata: ["authorization": "Bearer " + saved.deviceSecret])
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "other"),
                                              metadata: ["authorization": saved.deviceSecret])
            }
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: device),
                                              metadata: ["authorization": String(saved.deviceSecret.reversed())])
            }
            let reset = try await adminConnection.unary(
                V1.Admin.resetDevice, V1.ResetDeviceRequest(deviceID: device, issueSecret: true))
            secrets.append(reset.deviceSecret)
            await refused {
                _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: device),
                                              metadata: ["authorization": saved.deviceSecret])
            }
        }
        // The publish token: right and wrong.
        _ = try await anonymous.unary(
            V1.CoinWatch.publishPrices, V1.PublishPricesRequest(ticks: [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 1, scale: 0))]),
            metadata: ["authorization": publishToken])
        await refused {
            _ = try await anonymous.unary(V1.CoinWatch.publishPrices, V1.PublishPricesRequest(),
                                          metadata: ["authorization": publishToken + "x"])
        }
        await refused {
            _ = try await anonymous.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"),
                                          metadata: ["authorization": publishToken])
        }
        await server.stop()

        let log = server.log
        #expect(log.contains("authentication failed"), "the failures were logged (without their secrets)")
        #expect(messages.count >= 14)
        for secret in secrets {
            // The whole token, and its secret part alone (the 43 characters a key or device secret hides).
            var needles = [secret]
            if secret.hasPrefix("cwk_") { needles.append(String(secret.dropFirst(21))) }
            if secret.hasPrefix("cwd_") { needles.append(String(secret.dropFirst(4).prefix(43))) }
            for needle in needles {
                #expect(!log.contains(needle), "the log holds a secret")
                #expect(!messages.contains { $0.contains(needle) }, "an error message holds a secret")
            }
        }
    }
}
