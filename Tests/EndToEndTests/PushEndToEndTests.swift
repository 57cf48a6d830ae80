import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing

/// The real coinwatchd delivering alerts to the mock APNs (scripts/mock-apns.py) over HTTP/2 and TLS: what
/// arrives, exactly once, with the headers APNs wants, through refusals, throttling, server errors, dropped
/// connections, GOAWAY, a kill -9, a wrong key and expiry.
@Suite("push delivery to APNs", .serialized, .timeLimit(.minutes(5)))
struct PushEndToEndTests {
    /// A mock APNs and a coinwatchd delivering to it, with a client of the latter.
    struct Setup {
        let mock: MockAPNs
        var server: ServerProcess
        var client: CoinWatchClient
        let arguments: [String]

        static func start(
            maxStreams: Int = 100, minTokenInterval: Duration = .zero, maxTokenAge: Duration = .seconds(3600),
            verifyWithOtherKey: Bool = false, arguments: [String] = []
        ) async throws -> Setup {
            let mock = try await MockAPNs.start(
                maxStreams: maxStreams, minTokenInterval: minTokenInterval, maxTokenAge: maxTokenAge,
                verifyWithOtherKey: verifyWithOtherKey)
            let all = mock.coinwatchdArguments + arguments
            let server = try await ServerProcess.start(arguments: all)
            return Setup(mock: mock, server: server, client: Self.client(server), arguments: all)
        }

        static func client(_ server: ServerProcess) -> CoinWatchClient {
            CoinWatchClient.ofDaemon(port: server.port)
        }

        /// kill -9, and wait until the mock has seen the connection close (so a `release` answers nothing to the
        /// dead process).
        func crash() async throws {
            client.close()
            server.crash()
            _ = try await waitForMock { $0.openConnections == 0 }
        }

        /// A new coinwatchd on the data directory and port of the last one.
        mutating func restart() async throws {
            server = try await ServerProcess.start(port: server.port, dataDirectory: server.dataDirectory, arguments: arguments)
            client = Self.client(server)
        }

        /// The first alert a StreamAlerts call for `device` receives (its pending ones come first).
        func firstAlert(of device: String) async throws -> V1.Alert? {
            let stream = client.streamAlerts(device: device)
            return try await withThrowingTaskGroup(of: V1.Alert?.self) { group in
                group.addTask {
                    for try await alert in stream { return alert }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        func stop() {
            client.close()
            server.stopInBackground()
            mock.stopInBackground()
        }

        /// Registers `devices` (named `<prefix>-<n>`, tokens `<tokenPrefix>` then the device's number) with a rule
        /// above 100 on BTC, and sets BTC at 90 so every rule is armed.
        func prepare(_ count: Int, prefix: String = "phone", tokenPrefix: String = "") async throws -> [Device] {
            let devices = (0..<count).map { Device(name: "\(prefix)-\($0)", token: Self.token(tokenPrefix, $0)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, device) in devices.enumerated() {
                    if index >= 32 { try await group.next() }
                    group.addTask {
                        _ = try await client.registerDevice(device: device.name, apnsToken: device.token)
                        _ = try await client.setRule(device: device.name, symbol: "BTC", below: nil, above: ExactDecimal(100))
                    }
                }
                try await group.waitForAll()
            }
            try await client.publish([V1.Tick(symbol: "BTC", price: V1.Decimal(ExactDecimal(90)))])
            return devices
        }

        /// Crosses every rule of `prepare` (BTC to 110).
        func cross() async throws {
            try await client.publish([V1.Tick(symbol: "BTC", price: V1.Decimal(ExactDecimal(110)))])
        }

        /// Back below the band, so the rules re-arm.
        func rearm() async throws {
            try await client.publish([V1.Tick(symbol: "BTC", price: V1.Decimal(ExactDecimal(90)))])
        }

        /// 64 hex digits: `prefix`, then zeros, then `number` in hex.
        static func token(_ prefix: String, _ number: Int) -> String {
            let tail = String(number, radix: 16)
            return prefix + String(repeating: "0", count: 64 - prefix.count - tail.count) + tail
        }

        /// Waits (bounded) until the mock's summary satisfies `condition`; returns the last summary.
        func waitForMock(timeout: Duration = .seconds(90), _ condition: (MockAPNs.Summary) -> Bool) async throws
            -> MockAPNs.Summary
        {
            let deadline = ContinuousClock.now + timeout
            var summary = try await mock.summary()
            while !condition(summary) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                summary = try await mock.summary()
            }
            return summary
        }

        /// Waits (bounded) until coinwatchd's health satisfies `condition`; returns the last push state.
        func waitForPush(timeout: Duration = .seconds(90), _ condition: (V1.PushDeliveryState) -> Bool) async throws
            -> V1.PushDeliveryState
        {
            let deadline = ContinuousClock.now + timeout
            var state = try await client.healthCheck().push ?? V1.PushDeliveryState()
            while !condition(state) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                state = try await client.healthCheck().push ?? V1.PushDeliveryState()
            }
            return state
        }
    }

    struct Device: Sendable {
        let name: String
        let token: String
    }

    @Test("one crossing: exactly one push with the headers, collapse id and payload APNs wants; GetDevice shows it")
    func exactlyOnePush() async throws {
        let setup = try await Setup.start()
        defer { setup.stop() }
        let before = Date().timeIntervalSince1970
        let device = try #require(try await setup.prepare(1).first)
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == 1 }
        #expect(summary.deliveredIDs == 1)
        #expect(summary.requests == 1)
        #expect(summary.duplicateDeliveries == 0)
        let state = try await setup.waitForPush { $0.delivered == 1 && $0.inFlight == 0 }
        #expect(state.enabled)
        #expect(state.delivered == 1)
        #expect(state.queued == 0)

        let record = try #require(try setup.mock.records().first)
        #expect(record.status == 200)
        #expect(record.method == "POST")
        #expect(record.path == "/3/device/\(device.token)")
        #expect(record.topic == MockAPNs.topic)
        #expect(record.pushType == "alert")
        #expect(record.priority == "10")
        #expect(record.collapseID == "\(device.name):BTC")
        #expect(record.jwtIssuer == MockAPNs.teamID)
        let expiration = try #require(record.expiration.flatMap { Double($0) })
        #expect(expiration >= before + 3600 - 1 && expiration <= record.time + 3600)
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any])
        let aps = try #require(payload["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "BTC above 100")
        #expect(alert["body"] as? String == "BTC rose above 100 — now 110")
        #expect(payload["alert_id"] as? String == record.apnsID)
        #expect(payload["device"] as? String == device.name)
        #expect(payload["price"] as? String == "110")

        let registration = try await setup.client.device(device.name)
        #expect(registration.status == .active)
        #expect(registration.delivered == 1)
        #expect(registration.lastDeliveredAlertID == record.apnsID)
        #expect(registration.lastDeliveredAtMs > 0)
    }

    @Test("410 and BadDeviceToken disable the device; nothing more is sent to it; registering again revives it",
          arguments: [("410", "Unregistered"), ("400", "BadDeviceToken"), ("40d", "DeviceTokenNotForTopic")])
    func refusedTokens(prefix: String, reason: String) async throws {
        let setup = try await Setup.start()
        defer { setup.stop() }
        let device = try #require(try await setup.prepare(1, tokenPrefix: prefix).first)
        try await setup.cross()
        let state = try await setup.waitForPush { $0.disabledDevices == 1 }
        #expect(state.disabledDevices == 1)
        #expect(state.rejected == 1)
        let disabled = try await setup.client.device(device.name)
        #expect(disabled.status == .disabled)
        #expect(disabled.disabledReason == reason)
        #expect(disabled.disabledAtMs > 0)

        // Another crossing: kept for the device (a StreamAlerts call finds it pending), not sent.
        try await setup.rearm()
        try await setup.cross()
        let pending = try await setup.firstAlert(of: device.name)
        #expect(pending?.price.flatMap(ExactDecimal.init) == ExactDecimal(110))
        let quiet = try await setup.client.healthCheck().push
        #expect(quiet?.queued == 0 && quiet?.inFlight == 0 && quiet?.delivered == 0)
        #expect(try await setup.mock.summary().requests == 1)

        // A new token revives the device: the next crossing is delivered to it.
        let revived = try await setup.client.registerDevice(device: device.name, apnsToken: Setup.token("ab", 1))
        #expect(revived.status == .active)
        try await setup.rearm()
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == 1 }
        #expect(summary.deliveredIDs == 1)
        #expect(try setup.mock.records().last?.token == Setup.token("ab", 1))
        #expect(try await setup.client.device(device.name).status == .active)
    }

    @Test("429 then 200: delivered once after a backoff; 500 for a while: retried until accepted, never twice")
    func throttledAndFailing() async throws {
        let setup = try await Setup.start()
        defer { setup.stop() }
        let throttled = try await setup.prepare(1, prefix: "throttled", tokenPrefix: "429")
        let failing = try await setup.prepare(1, prefix: "failing", tokenPrefix: "5003")
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == 2 }
        #expect(summary.deliveredIDs == 2)
        #expect(summary.duplicateDeliveries == 0)
        let records = try setup.mock.records()
        let throttledStatuses = records.filter { $0.token == throttled[0].token }.map(\.status)
        let failingStatuses = records.filter { $0.token == failing[0].token }.map(\.status)
        #expect(throttledStatuses == [429, 200])
        #expect(failingStatuses == [500, 500, 500, 200])
        // Every attempt of one alert carries its apns-id.
        #expect(Set(records.filter { $0.token == failing[0].token }.map(\.apnsID)).count == 1)
        let state = try await setup.waitForPush { $0.delivered == 2 }
        #expect(state.retried == 4)
        #expect(try await setup.client.device(throttled[0].name).delivered == 1)
        #expect(try await setup.client.device(failing[0].name).delivered == 1)
    }

    @Test("the mock drops the connection, or sends GOAWAY, mid-burst: every alert is delivered exactly once",
          arguments: ["drop-after 60", "goaway-after 60"])
    func connectionLostMidBurst(command: String) async throws {
        let setup = try await Setup.start()
        defer { setup.stop() }
        let devices = try await setup.prepare(200)
        try await setup.mock.command(command)
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        #expect(summary.deliveredIDs == devices.count)
        #expect(summary.connections >= 2, "coinwatchd reconnected")
        let state = try await setup.waitForPush { $0.delivered == devices.count && $0.queued == 0 }
        #expect(state.delivered == UInt64(devices.count))
        #expect(summary.duplicateDeliveries == 0)
    }

    @Test("never more concurrent streams than the server's SETTINGS allow")
    func streamLimit() async throws {
        let setup = try await Setup.start(maxStreams: 10)
        defer { setup.stop() }
        let devices = try await setup.prepare(150)
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        #expect(summary.deliveredIDs == devices.count)
        #expect(summary.maxConcurrentStreams <= 10)
        #expect(summary.protocolErrors == 0)
        #expect(summary.connections == 1)
    }

    @Test("kill -9 with alerts queued: all are delivered after the restart, none twice that APNs had accepted")
    func crashWithAlertsQueued() async throws {
        var setup = try await Setup.start()
        defer { setup.stop() }
        let devices = try await setup.prepare(40)
        try await setup.mock.command("hold-after 10")
        try await setup.cross()
        // Ten accepted, and coinwatchd has recorded them; thirty in flight, unanswered.
        let state = try await setup.waitForPush { $0.delivered == 10 }
        #expect(state.delivered == 10)
        let accepted = Set(try setup.mock.records().filter { $0.status == 200 }.map(\.apnsID))
        #expect(accepted.count == 10)
        try await setup.crash()
        try await setup.mock.command("release")
        try await setup.restart()

        let summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        #expect(summary.deliveredIDs == devices.count)
        #expect(summary.duplicateDeliveries == 0)
        let afterRestart = try setup.mock.records().filter { $0.connection > 1 }
        #expect(afterRestart.allSatisfy { !accepted.contains($0.apnsID) })
        // The mock counts an alert when it answers 200; coinwatchd records it when that answer arrives and its
        // write lands. The new process's counters start at zero and move only after the device records are written.
        let resumed = try await setup.waitForPush { $0.delivered == UInt64(devices.count - accepted.count) && $0.inFlight == 0 }
        #expect(resumed.delivered == UInt64(devices.count - accepted.count))
        for device in devices {
            #expect(try await setup.client.device(device.name).delivered == 1)
        }
    }

    @Test("one provider token is reused for 1,000 pushes, and no token is refused as too frequent")
    func tokenReused() async throws {
        // As APNs does, the mock refuses a token replaced within 20 minutes of the previous one.
        let setup = try await Setup.start(maxStreams: 1000, minTokenInterval: .seconds(1200))
        defer { setup.stop() }
        let devices = try await setup.prepare(1000)
        try await setup.cross()
        let summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        #expect(summary.deliveredIDs == devices.count)
        #expect(summary.byStatus[429] == nil)
        #expect(summary.tokens.count == 1)
        #expect(summary.tokens.first?.requests == devices.count)
        #expect(Set(try setup.mock.records().compactMap(\.jwt)).count == 1)
    }

    @Test("the token is made at first use and replaced once it reaches its configured age")
    func tokenReplacedAfterItsAge() async throws {
        let setup = try await Setup.start(arguments: ["--apns-token-refresh", "2s"])
        defer { setup.stop() }
        let devices = try await setup.prepare(3)
        // Well after the start: a token made with the client would already be older than its refresh age.
        let firstUse = Date().timeIntervalSince1970
        while Date().timeIntervalSince1970 < firstUse + 3 { try await Task.sleep(for: .milliseconds(100)) }
        let sent = Int(Date().timeIntervalSince1970)
        try await setup.cross()
        var summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        #expect(summary.tokens.count == 1)
        let first = try #require(summary.tokens.first)
        #expect(first.iat >= sent)
        #expect(first.requests == devices.count)

        // Past the refresh age (the wall clock, in whole seconds as iat counts): the next sends carry a new token.
        while Date().timeIntervalSince1970 < Double(first.iat + 3) { try await Task.sleep(for: .milliseconds(100)) }
        try await setup.rearm()
        try await setup.cross()
        summary = try await setup.waitForMock { $0.deliveredIDs == 2 * devices.count }
        #expect(summary.deliveredIDs == 2 * devices.count)
        let iats = summary.tokens.map(\.iat).sorted()
        #expect(iats.count == 2)
        #expect(iats.last! - iats.first! >= 2)
        #expect(summary.tokens.allSatisfy { $0.requests == devices.count })
    }

    @Test("a token APNs calls expired is replaced once, and the push goes through")
    func expiredTokenReplaced() async throws {
        // The mock takes tokens for 4 s only; coinwatchd would keep its token 40 minutes.
        let setup = try await Setup.start(maxTokenAge: .seconds(4))
        defer { setup.stop() }
        let devices = try await setup.prepare(2)
        try await setup.cross()
        var summary = try await setup.waitForMock { $0.deliveredIDs == devices.count }
        let first = try #require(summary.tokens.first)
        while Date().timeIntervalSince1970 < Double(first.iat + 5) { try await Task.sleep(for: .milliseconds(100)) }
        try await setup.rearm()
        try await setup.cross()
        summary = try await setup.waitForMock { $0.deliveredIDs == 2 * devices.count }
        #expect(summary.deliveredIDs == 2 * devices.count)
        #expect(summary.duplicateDeliveries == 0)
        #expect(summary.tokens.count >= 2)
        let refused = try setup.mock.records().filter { $0.status == 403 }
        #expect(!refused.isEmpty && refused.allSatisfy { $0.reason == "ExpiredProviderToken" })
        let state = try await setup.waitForPush { $0.delivered == UInt64(2 * devices.count) }
        #expect(!state.paused)
        #expect(state.retried == 0, "a refused token is not a failed delivery")
    }

    @Test("a token signed with the wrong key is refused: coinwatchd tries one fresh token, then pauses with one clear line")
    func wrongKeyPauses() async throws {
        let setup = try await Setup.start(verifyWithOtherKey: true)
        defer { setup.stop() }
        let devices = try await setup.prepare(5)
        try await setup.cross()
        let state = try await setup.waitForPush { $0.paused }
        #expect(state.paused)
        #expect(state.pauseReason.contains("InvalidProviderToken"), "\(state.pauseReason)")
        let summary = try await setup.mock.summary()
        #expect(summary.byStatus[403] == summary.requests)
        #expect(summary.deliveredIDs == 0)
        // One send with the first token (a fresh connection carries one until it answers), one with the fresh one.
        #expect(summary.requests == 2)
        let records = try setup.mock.records()
        #expect(Set(records.compactMap(\.jwt)).count == 2)
        let log = setup.server.log
        let lines = log.split(separator: "\n").filter { $0.contains("APNs delivery paused") }
        #expect(lines.count == 1, "\(log)")
        #expect(lines.first?.contains("check --apns-key-file, --apns-key-id and --apns-team-id") == true)
        // The key and the tokens never reach the log.
        let key = try String(contentsOfFile: setup.mock.keyFile, encoding: .utf8)
        let keyBody = key.split(separator: "\n").dropFirst().first.map(String.init) ?? key
        #expect(!log.contains(keyBody))
        #expect(!log.contains("bearer"))
        #expect(!log.contains("eyJ"))
        // Still paused: nothing more was sent.
        let after = try await setup.waitForPush { $0.queued == UInt64(devices.count) }
        #expect(after.paused)
        #expect(try await setup.mock.summary().requests == 2)
    }

    @Test("an alert is never sent after its expiry: retried until then and dropped, or left by a crash and dropped")
    func expiredAlertsAreNeverSent() async throws {
        var setup = try await Setup.start(arguments: ["--alert-expiry", "3s"])
        defer { setup.stop() }
        // Always 500: retried with backoff until the next retry would fall past the expiry.
        let failing = try #require(try await setup.prepare(1, prefix: "failing", tokenPrefix: "500f").first)
        try await setup.cross()
        let state = try await setup.waitForPush { $0.expired == 1 }
        #expect(state.expired == 1)
        #expect(state.queued == 0 && state.inFlight == 0)
        // However many attempts a busy machine made: each started before the expiration second (the second of
        // slack covers the way to the mock).
        let attempts = try setup.mock.records().filter { $0.token == failing.token }
        for attempt in attempts {
            #expect(attempt.time < Double(attempt.expiration ?? "0")! + 1)
        }

        // Left in the outbox by a kill -9 (sent and unanswered, or not sent yet); restarted after the expiry,
        // coinwatchd drops it unsent.
        #expect(try await setup.client.unregisterDevice(device: failing.name))
        let held = try #require(try await setup.prepare(1, prefix: "held").first)
        try await setup.mock.command("hold")
        try await setup.cross()
        // A StreamAlerts call finds it pending: it is in the outbox.
        let pending = try #require(try await setup.firstAlert(of: held.name))
        let expiration = Double((pending.timeMs + 3000) / 1000)
        try await setup.crash()
        try await setup.mock.command("release")
        let before = try setup.mock.records().filter { $0.token == held.token }.count
        while Date().timeIntervalSince1970 < expiration + 1 { try await Task.sleep(for: .milliseconds(100)) }
        try await setup.restart()
        let restarted = try await setup.waitForPush { $0.expired == 1 }
        #expect(restarted.expired == 1, "the restarted server dropped the expired alert")
        #expect(try await setup.mock.summary().sentAfterExpiration == 0)
        let heldRecords = try setup.mock.records().filter { $0.token == held.token }
        #expect(heldRecords.count == before, "\(heldRecords)")
    }
}

/// How coinwatchd starts with and without APNs.
@Suite("push configuration", .serialized)
struct PushConfigurationTests {
    @Test("without an APNs key, delivery is off and the start-up line says so")
    func offWithoutKey() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("listening on") })
        #expect(line.contains("push=\"off (no APNs key configured)\""), "\(line)")
        let client = CoinWatchClient.ofDaemon(port: server.port)
        defer { client.close() }
        let push = try #require(try await client.healthCheck().push)
        #expect(!push.enabled)
        // Registrations are kept all the same, for when delivery is turned on.
        let stored = try await client.registerDevice(device: "phone-1", apnsToken: String(repeating: "0f", count: 32))
        #expect(stored.status == .active)
        #expect(try await client.device("phone-1") == stored)
    }

    @Test("a key file that cannot be used stops the start with one line naming it")
    func unusableKey() throws {
        let data = try TemporaryDirectory()
        let missing = data.path + "/AuthKey_NOPE.p8"
        let result = try ServerProcess.run([
            "--data", data.path + "/store", "--apns-key-file", missing, "--apns-key-id", "K1", "--apns-team-id", "T1",
            "--apns-topic", "com.example.app",
        ])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("coinwatchd: cannot start APNs delivery: cannot use the APNs key file \(missing)"),
                "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: data.path + "/store"))
    }
}
