import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// A real coinwatchd with `--auth required`: every method it serves against every kind of caller, through the
/// native protocol, with the status `docs/SECURITY.md` documents; and revocation reaching open connections.
@Suite("authorisation end to end", .serialized)
struct AuthorizationTests {
    /// A request for each method, about device `phone-1` where there is a device.
    static func request(_ method: String) -> [UInt8] {
        let device = Array("phone-1".utf8)
        let deviceRequest = [0x0A, UInt8(device.count)] + device
        switch method {
        case "coinwatch.v1.CoinWatch/SaveSettings":
            return V1.SaveSettingsRequest(
                deviceID: "phone-1", setRules: ["BTC": V1.AlertRule(below: V1.Decimal(mantissa: 5, scale: 0))]).serializedBytes()
        case "coinwatch.v1.CoinWatch/PublishPrices":
            return V1.PublishPricesRequest(ticks: [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 7, scale: 0))]).serializedBytes()
        case "coinwatch.v1.Admin/CreateKey":
            return V1.CreateKeyRequest(name: "made", scopes: ["prices:read"]).serializedBytes()
        case "coinwatch.v1.Admin/RevokeKey":
            return V1.RevokeKeyRequest(id: "0123456789abcdef").serializedBytes()
        case "coinwatch.v1.Admin/ResetDevice":
            return V1.ResetDeviceRequest(deviceID: "phone-9").serializedBytes()
        case "coinwatch.v1.CoinWatch/RegisterDevice":
            // device_id, apns_token (64 hex digits).
            let token = Array(String(repeating: "ab", count: 32).utf8)
            return deviceRequest + [0x12, UInt8(token.count)] + token
        default:
            return deviceRequest
        }
    }

    /// A server with authorisation required, an admin key made before it started, and phone-1 and phone-2
    /// claimed by their first saves.
    final class Fixture: Sendable {
        let server: ServerProcess
        let group: EventLoopGroup
        let admin: String
        let phone1: String
        let phone2: String

        init(arguments: [String] = []) async throws {
            let data = try TemporaryDirectory(prefix: "auth-e2e")
            let created = try await ServerProcess.run(["keys", "create", "--scope", "admin", "--name", "test-admin",
                                                 "--data", data.path + "/db"])
            admin = try #require(created.output.split(separator: "\n").first { $0.hasPrefix("cwk_") }.map(String.init))
            server = try await ServerProcess.start(dataDirectory: data, arguments: ["--auth", "required"] + arguments)
            group = try EventLoopGroup(threads: 1, namePrefix: "auth-e2e")
            let anonymous = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
            defer { anonymous.close() }
            var secrets: [String] = []
            for device in ["phone-1", "phone-2"] {
                // Trust on first use: the first save of a device without a secret needs no credential.
                let saved = try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(
                    deviceID: device, setRules: ["ETH": V1.AlertRule(above: V1.Decimal(mantissa: 9, scale: 0))]))
                secrets.append(saved.deviceSecret)
            }
            phone1 = secrets[0]
            phone2 = secrets[1]
        }

        func connect(hello: String = "") async throws -> RPCClientConnection {
            var options = RPCClientConnection.Options()
            options.authToken = hello
            return try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next(), options: options)
        }

        /// A key with `scopes`, made through the Admin service.
        func key(_ scopes: [String], on connection: RPCClientConnection) async throws -> String {
            try await connection.unary(
                V1.Admin.createKey, V1.CreateKeyRequest(name: "k", scopes: scopes),
                metadata: ["authorization": "Bearer " + admin]
            ).token
        }

        func stop() {
            server.stopInBackground()
            group.syncShutdownGracefully()
        }
    }

    /// How a call ended: its status code, or nil for a stream that is running (it was allowed).
    static func outcome(
        _ method: String, streaming: Bool, authorization: String?, on connection: RPCClientConnection
    ) async -> RPCError.Code? {
        let metadata = authorization.map { ["authorization": $0] } ?? [:]
        let payload = request(method)
        guard streaming else {
            do {
                _ = try await connection.unary(method: method, payload: payload, timeout: .seconds(30), metadata: metadata)
                return .ok
            } catch {
                return error.code
            }
        }
        // A refused stream is answered while its Call is dispatched, before the server reads the next frame: a
        // Health check sent after it answers after that refusal, whatever the machine's speed.
        let ended = Mutex<RPCError.Code??>(nil)
        let id = connection.startStream(method: method, payload: payload, metadata: metadata, onMessage: { _ in },
                                        onEnd: { error in ended.withLock { $0 = .some(error?.code ?? .ok) } })
        _ = try? await connection.unary(V1.Health.check, V1.HealthCheckRequest(), timeout: .seconds(30))
        let result = ended.withLock { $0 }
        connection.cancel(callID: id)
        return result ?? nil
    }

    @Test("every method the server serves answers every caller as documented", arguments: [false, true])
    func matrix(bearer: Bool) async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let connection = try await fixture.connect()
        defer { connection.close() }
        var keys: [String: String] = [:]
        for method in connection.welcome.methods {
            let rule = try #require(AuthorizationMatrix.rules[method], "\(method) is served but has no documented rule")
            let streaming = ["/StreamPrices", "/StreamAlerts", "/Watch", "/ServerReflectionInfo"].contains {
                method.hasSuffix($0)
            }
            for caller in AuthorizationMatrix.Caller.allCases {
                let token: String?
                switch caller {
                case .none: token = nil
                case .wrongKey: token = AuthorizationMatrix.unknownKey
                case .keyWithoutScope:
                    let scopes = AuthorizationMatrix.scopesWithout(rule)
                    if keys[scopes.joined()] == nil { keys[scopes.joined()] = try await fixture.key(scopes, on: connection) }
                    token = keys[scopes.joined()]
                case .rightKey:
                    let scope = rule.scope ?? "admin"
                    if keys[scope] == nil { keys[scope] = try await fixture.key([scope], on: connection) }
                    token = keys[scope]
                case .otherDevice: token = fixture.phone2
                case .rightDevice: token = fixture.phone1
                }
                let value = token.map { bearer ? "Bearer " + $0 : $0 }
                let got = await Self.outcome(method, streaming: streaming, authorization: value, on: connection)
                switch AuthorizationMatrix.expected(caller, rule) {
                case .unauthenticated:
                    #expect(got == .unauthenticated, "\(method) with \(caller.rawValue)")
                case .permissionDenied:
                    #expect(got == .permissionDenied, "\(method) with \(caller.rawValue)")
                case .allowed:
                    #expect(got != .unauthenticated && got != .permissionDenied && got != .resourceExhausted,
                            "\(method) with \(caller.rawValue) was refused: \(String(describing: got))")
                }
            }
        }
        // Allowed calls did what they asked.
        let settings = try await connection.unary(
            V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"),
            metadata: ["authorization": "Bearer " + fixture.phone1])
        #expect(settings.settings?.deviceID == "phone-1")
    }

    @Test("the Hello token authenticates every call of its connection")
    func helloToken() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let phone = try await fixture.connect(hello: fixture.phone1)
        defer { phone.close() }
        let mine = try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
        #expect(mine.settings?.deviceID == "phone-1")
        let error = await #expect(throws: RPCError.self) {
            try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-2"))
        }
        #expect(error?.code == .permissionDenied)
        #expect(error?.message.contains(fixture.phone1) == false)
        let anonymous = try await fixture.connect()
        defer { anonymous.close() }
        let refused = await #expect(throws: RPCError.self) {
            try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "phone-1"))
        }
        #expect(refused?.code == .unauthenticated)
    }

    @Test("a key revoked through the Admin service stops working on a connection already open, streams included")
    func revocationReachesOpenConnections() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let adminConnection = try await fixture.connect(hello: fixture.admin)
        defer { adminConnection.close() }
        let made = try await adminConnection.unary(
            V1.Admin.createKey, V1.CreateKeyRequest(name: "reader", scopes: ["prices:read"]))
        let reader = try await fixture.connect(hello: made.token)
        defer { reader.close() }
        _ = try await reader.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest())
        let streamEnd = Mutex<RPCError?>(nil)
        let streamEnded = Mutex(false)
        reader.startStream(
            method: V1.CoinWatch.streamPrices.path, payload: V1.StreamPricesRequest().serializedBytes(),
            onMessage: { _ in }, onEnd: { error in
                streamEnd.withLock { $0 = error }
                streamEnded.withLock { $0 = true }
            })
        // The stream is running (a later call on the connection was answered while it went on).
        _ = try await reader.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest())
        #expect(!streamEnded.withLock { $0 })

        let revoked = try await adminConnection.unary(V1.Admin.revokeKey, V1.RevokeKeyRequest(id: made.key!.id))
        #expect(revoked.key?.revoked == true)
        // Bounded polling: the revocation is visible to the next call; the open stream is ended.
        var refused: RPCError?
        for _ in 0..<500 where refused == nil {
            do {
                _ = try await reader.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest())
            } catch {
                refused = error
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(refused?.code == .unauthenticated)
        for _ in 0..<3000 where !streamEnded.withLock({ $0 }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(streamEnd.withLock { $0 }?.code == .unauthenticated)
        let listed = try await adminConnection.unary(V1.Admin.listKeys, V1.ListKeysRequest(includeRevoked: true))
        #expect(listed.keys.first { $0.id == made.key!.id }?.revoked == true)
    }

    @Test("a device reset by an operator loses its old secret on open connections and can be claimed again")
    func deviceReset() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let phone = try await fixture.connect(hello: fixture.phone1)
        defer { phone.close() }
        _ = try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
        let admin = try await fixture.connect(hello: fixture.admin)
        defer { admin.close() }
        let reset = try await admin.unary(V1.Admin.resetDevice, V1.ResetDeviceRequest(deviceID: "phone-1"))
        #expect(reset.hadSecret && reset.deviceSecret.isEmpty)
        let error = await #expect(throws: RPCError.self) {
            try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
        }
        #expect(error?.code == .unauthenticated)
        let anonymous = try await fixture.connect()
        defer { anonymous.close() }
        let claimed = try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "phone-1"))
        #expect(claimed.deviceSecret.hasPrefix("cwd_") && claimed.deviceSecret != fixture.phone1)
    }

    @Test("a device's first RegisterDevice returns its secret once, and a stranger cannot register it afterwards")
    func registrationClaims() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let anonymous = try await fixture.connect()
        defer { anonymous.close() }
        let request = V1.RegisterDeviceRequest(
            deviceID: "phone-3", apnsToken: String(repeating: "ab", count: 32), environment: .production)
        let registered = try await anonymous.unary(V1.CoinWatch.registerDevice, request)
        #expect(registered.deviceSecret.hasPrefix("cwd_"))
        let stranger = await #expect(throws: RPCError.self) {
            try await anonymous.unary(V1.CoinWatch.registerDevice, request)
        }
        #expect(stranger?.code == .unauthenticated)
        let phone = try await fixture.connect(hello: registered.deviceSecret)
        defer { phone.close() }
        let again = try await phone.unary(V1.CoinWatch.registerDevice, request)
        #expect(again.deviceSecret.isEmpty, "a secret is shown once")
        let saved = try await phone.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(
            deviceID: "phone-3", setRules: ["BTC": V1.AlertRule(above: V1.Decimal(mantissa: 1, scale: 0))]))
        #expect(saved.deviceSecret.isEmpty, "the first save of a registered device issues nothing more")
    }

    @Test("a device claimed by its first save keeps its secret across kill -9: it is not free to claim afterwards")
    func claimSurvivesCrash() async throws {
        let fixture = try await Fixture()
        defer { fixture.group.syncShutdownGracefully() }
        // phone-1 and phone-2 were claimed through the settings journal; nothing has checkpointed it yet.
        fixture.server.crash()
        let restarted = try await ServerProcess.start(
            dataDirectory: fixture.server.dataDirectory, arguments: ["--auth", "required"])
        defer { restarted.stopInBackground() }
        var options = RPCClientConnection.Options()
        options.authToken = fixture.phone1
        let phone = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: restarted.port, on: fixture.group.next(), options: options)
        defer { phone.close() }
        let settings = try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
        #expect(settings.settings?.rules["ETH"] != nil)
        let anonymous = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: restarted.port, on: fixture.group.next())
        defer { anonymous.close() }
        let error = await #expect(throws: RPCError.self, "anyone could claim a device claimed before the crash") {
            try await anonymous.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "phone-2"))
        }
        #expect(error?.code == .unauthenticated)
    }

    @Test("a device reset survives kill -9: the first save's secret, replayed from the journal, does not come back")
    func deviceResetSurvivesCrash() async throws {
        let fixture = try await Fixture()
        defer { fixture.group.syncShutdownGracefully() }
        let admin = try await fixture.connect(hello: fixture.admin)
        // phone-1's secret came with its first save, through the settings journal; the resets write directly.
        let reset = try await admin.unary(V1.Admin.resetDevice, V1.ResetDeviceRequest(deviceID: "phone-1"))
        #expect(reset.hadSecret)
        let reissued = try await admin.unary(
            V1.Admin.resetDevice, V1.ResetDeviceRequest(deviceID: "phone-2", issueSecret: true))
        #expect(reissued.deviceSecret.hasPrefix("cwd_") && reissued.deviceSecret != fixture.phone2)
        admin.close()
        fixture.server.crash()

        // The credentials are loaded before the settings journal replays, so a replayed secret shows only from the
        // start after.
        let replayed = try await ServerProcess.start(
            dataDirectory: fixture.server.dataDirectory, arguments: ["--auth", "required"])
        await replayed.stop()
        let restarted = try await ServerProcess.start(
            dataDirectory: fixture.server.dataDirectory, arguments: ["--auth", "required"])
        defer { restarted.stopInBackground() }
        func code(_ token: String, _ device: String) async throws -> RPCError.Code {
            var options = RPCClientConnection.Options()
            options.authToken = token
            let connection = try await RPCClientConnection.connect(
                host: "127.0.0.1", port: restarted.port, on: fixture.group.next(), options: options)
            defer { connection.close() }
            do {
                _ = try await connection.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: device))
                return .ok
            } catch {
                return error.code
            }
        }
        #expect(try await code(fixture.phone1, "phone-1") == .unauthenticated, "a reset secret came back")
        #expect(try await code(fixture.phone2, "phone-2") == .unauthenticated, "a replaced secret came back")
        #expect(try await code(reissued.deviceSecret, "phone-2") == .ok, "the secret the reset issued was lost")
    }

    @Test("--public-prices lets anonymous callers read prices and nothing else")
    func publicPrices() async throws {
        let fixture = try await Fixture(arguments: ["--public-prices"])
        defer { fixture.stop() }
        let anonymous = try await fixture.connect()
        defer { anonymous.close() }
        _ = try await anonymous.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest())
        let error = await #expect(throws: RPCError.self) {
            try await anonymous.unary(V1.CoinWatch.publishPrices, V1.PublishPricesRequest())
        }
        #expect(error?.code == .unauthenticated)
    }

    @Test("a non-loopback listener without --auth refuses to start and says why; --auth off starts it")
    func protectedMode() async throws {
        let data = try TemporaryDirectory()
        let refused = try await ServerProcess.run(["--listen", "0.0.0.0:0", "--feed", "none", "--data", data.path + "/db"])
        #expect(refused.status == 1, "output: \(refused.output)")
        #expect(refused.output.contains("coinwatchd: refusing to start: listening on 0.0.0.0 without --auth"))
        #expect(refused.output.contains("--auth required") && refused.output.contains("--auth off"))
        #expect(!FileManager.default.fileExists(atPath: data.path + "/db"))
        let open = try await ServerProcess.start(arguments: ["--listen", "0.0.0.0:0", "--auth", "off"])
        #expect(open.log.contains("auth=off"))
        await open.stop()
        let usage = try await ServerProcess.run(["--auth", "maybe", "--data", data.path + "/db"])
        #expect(usage.status == 64)
        #expect(usage.output.hasPrefix("error: --auth: 'maybe' is not required or off"), "output: \(usage.output)")
    }
}
