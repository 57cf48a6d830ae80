import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchPush
import CoinWatchRPC
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Delivery of the outbox to APNs, driven through a fake provider: what is sent, and what each answer does to the
/// outbox and to the device's registration.
@Suite(.timeLimit(.minutes(2)))
struct PushDeliveryTests {
    @Test func anAlertIsSentOnceWithItsHeadersAndLeavesTheOutboxOnlyAfterAPNsAcceptsIt() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken("AB"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForSends(fake, 1))
            let alert = try #require(try harness.outbox().first)
            let request = try #require(fake.received.first)
            #expect(request.apnsID == alert.id)
            #expect(request.deviceToken == pushToken("ab"))
            #expect(request.topic == "com.example.coinwatch")
            #expect(request.collapseID == "phone-1:BTC")
            #expect(request.payload == Array(alert.apnsPayloadJSON.utf8))
            #expect(request.expiration == (alert.timeMs + 3_600_000) / 1000)
            #expect(request.priority == 10)
            #expect(request.pushType == "alert")

            // Unanswered, it stays in the outbox (and in flight: not sent again).
            #expect(try harness.outbox().map(\.id) == [alert.id])
            fake.deliver(request)
            #expect(await harness.waitForOutbox { $0.isEmpty })
            let device = try await harness.device("phone-1")
            #expect(device.delivered == 1)
            #expect(device.lastDeliveredAlertID == alert.id)
            #expect(device.lastDeliveredAtMs >= alert.timeMs)
            #expect(harness.pushStats.delivered == 1)
            #expect(fake.received.count == 1)
        }
    }

    @Test func registrationsAreValidatedAndStoredInCanonicalForm() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            let stored = try await harness.register(
                "3F2504E0-4F89-11D3-9A0C-0305E82C3301", token: String(repeating: "AB", count: 40), topic: "com.example.other")
            #expect(stored.deviceID == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
            #expect(stored.apnsToken == String(repeating: "ab", count: 40))
            #expect(stored.environment == .production)
            #expect(stored.status == .active)
            #expect(try await harness.device("3f2504e0_4f89_11d3_9a0c_0305e82c3301") == stored)

            let invalid: [(token: String, field: String)] = [
                (String(repeating: "a", count: 63), "apns_token"), (String(repeating: "a", count: 65), "apns_token"),
                (String(repeating: "a", count: 202), "apns_token"), (String(repeating: "g", count: 64), "apns_token"),
            ]
            for (token, field) in invalid {
                let error = await #expect(throws: RPCError.self) { try await harness.register("phone-2", token: token) }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.hasPrefix("\(field): must be an even number of 64–200 hex digits") == true)
            }
            let topic = await #expect(throws: RPCError.self) {
                try await harness.register("phone-2", token: pushToken(), topic: "not a bundle id")
            }
            #expect(topic?.code == .invalidArgument)
            // This server sends to production: a sandbox token could never be reached through it.
            let environment = await #expect(throws: RPCError.self) {
                try await harness.register("phone-2", token: pushToken(), environment: .sandbox)
            }
            #expect(environment?.code == .failedPrecondition)
            let missing = await #expect(throws: RPCError.self) { try await harness.device("phone-2") }
            #expect(missing?.code == .notFound)

            let connection = try await harness.connect()
            defer { connection.close() }
            let removed = try await connection.unary(
                V1.CoinWatch.unregisterDevice, V1.UnregisterDeviceRequest(deviceID: stored.deviceID))
            #expect(removed.existed)
            let again = try await connection.unary(
                V1.CoinWatch.unregisterDevice, V1.UnregisterDeviceRequest(deviceID: stored.deviceID))
            #expect(!again.existed)
            #expect(harness.pushStats.registeredDevices == 0)
        }
    }

    @Test(arguments: [(410, "Unregistered"), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic")])
    func aRefusedTokenDisablesTheDeviceUntilItRegistersAgain(status: Int, reason: String) async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken("41"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000"), "ETH": rule(above: "3000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForSends(fake, 1))
            fake.answer(try #require(fake.sent(0)), status: status, reason: reason, outcome: .tokenRejected)
            #expect(await eventually { (try? await harness.device("phone-1"))?.status == .disabled })
            let disabled = try await harness.device("phone-1")
            #expect(disabled.disabledReason == reason)
            #expect(disabled.disabledAtMs > 0)
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(harness.pushStats.rejected == 1)
            #expect(harness.pushStats.disabledDevices == 1)

            // Nothing more is sent to it: the next alert waits in the outbox.
            harness.publish("ETH", "2900")
            harness.publish("ETH", "3010")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            #expect(await harness.waitForFired(2))
            #expect(fake.received.count == 1)

            // Registering again (a new token) revives it, and the waiting alert goes out.
            let revived = try await harness.register("phone-1", token: pushToken("42"))
            #expect(revived.status == .active)
            #expect(revived.disabledReason.isEmpty)
            #expect(await harness.waitForSends(fake, 2))
            let resent = try #require(fake.sent(1))
            #expect(resent.deviceToken == pushToken("42"))
            fake.deliver(resent)
            #expect(await harness.waitForOutbox { $0.isEmpty })
        }
    }

    @Test func anAlertOnItsWayToAnOldTokenGoesToTheNewOneWhenTheOldIsRefused() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken("43"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForSends(fake, 1))
            let toOldToken = try #require(fake.sent(0))
            // The app reinstalled: a new token is registered while the alert is on its way to the old one.
            try await harness.register("phone-1", token: pushToken("44"))
            fake.answer(toOldToken, status: 410, reason: "Unregistered", outcome: .tokenRejected)
            #expect(await harness.waitForSends(fake, 2), "the alert was dropped with the old token")
            let toNewToken = try #require(fake.sent(1))
            #expect(toNewToken.deviceToken == pushToken("44"))
            #expect(toNewToken.apnsID == toOldToken.apnsID)
            #expect(try await harness.device("phone-1").status == .active)
            fake.deliver(toNewToken)
            #expect(await harness.waitForOutbox { $0.isEmpty })
        }
    }

    /// This node fires no device's alerts (cluster mode, another node's shards).
    struct NoShards: AlertGate {
        func fires(for device: DeviceID) -> Bool { false }
    }

    @Test func anAlertHeldBackForAnotherNodeAndReplayedOnTakeoverIsSentToAPNs() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            harness.service.alerts.fireOnly(where: NoShards())
            try await harness.register("phone-1", token: pushToken("45"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await eventually { harness.service.alerts.stats.alertsSuppressed >= 1 })
            #expect(fake.received.isEmpty, "held back for the shard's owner")
            // The owner died before firing it: this node takes the shard over and fires what it held back.
            let device = try DeviceID(validating: "phone-1")
            harness.service.alerts.shardsTaken([AlertShards.shard(of: device)], sinceMs: 0)
            #expect(await harness.waitForSends(fake, 1), "the replayed alert never reached APNs")
            fake.deliver(try #require(fake.sent(0)))
            #expect(await harness.waitForOutbox { $0.isEmpty })
        }
    }

    @Test func failedSendsAreRetriedWithTheSameApnsIDUntilAccepted() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken("50"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForSends(fake, 1))
            let first = try #require(fake.sent(0))
            fake.answer(first, status: 500, reason: "InternalServerError", outcome: .retry)
            #expect(await harness.waitForSends(fake, 2))
            let second = try #require(fake.sent(1))
            #expect(second == first, "the same alert, apns-id, expiration and all")
            fake.answer(second, status: 429, reason: "TooManyRequests", outcome: .retry)
            #expect(await harness.waitForSends(fake, 3))
            fake.deliver(try #require(fake.sent(2)))
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(harness.pushStats.retried == 2)
            #expect(harness.pushStats.delivered == 1)
            #expect(try await harness.device("phone-1").delivered == 1)
        }
    }

    @Test func anAlertFailingUntilItsExpiryIsDroppedAndNeverSentAfterIt() async throws {
        let fake = FakeAPNs()
        let base = delivering(to: fake)
        let configure: (inout CoinWatchService.Configuration) -> Void = { configuration in
            base(&configuration)
            configuration.alerts.outboxExpiry = .seconds(3)
        }
        try await withAlertService(configure: configure) { harness in
            try await harness.register("phone-1", token: pushToken("50"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            // Every send fails; however slow the machine, the alert ends expired (sent a few times, or never).
            var answered = 0
            #expect(await eventually {
                while let request = fake.sent(answered) {
                    fake.answer(request, status: 503, outcome: .retry)
                    answered += 1
                }
                return harness.pushStats.expired == 1
            })
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(harness.pushStats.delivered == 0)
            for (request, arrival) in fake.arrivals {
                #expect(arrival < request.expiration * 1000, "sent at \(arrival) ms, after its expiration")
            }
            #expect(Set(fake.received.map(\.apnsID)).count <= 1)
        }
    }

    @Test func anAlertReplacedWhileInFlightIsSentAfterTheAnswer() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken())
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForSends(fake, 1))
            harness.publish("BTC", "4970")  // re-armed
            harness.publish("BTC", "5020")  // a newer alert replaces the one in flight
            #expect(await harness.waitForFired(2))
            let newer = try #require(try harness.outbox().first)
            let older = try #require(fake.sent(0))
            #expect(newer.id != older.apnsID)
            #expect(fake.received.count == 1)

            fake.deliver(older)
            #expect(await harness.waitForSends(fake, 2))
            let second = try #require(fake.sent(1))
            #expect(second.apnsID == newer.id)
            #expect(try harness.outbox().map(\.id) == [newer.id])
            fake.deliver(second)
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(try await harness.device("phone-1").delivered == 2)
        }
    }

    @Test func aStreamDoesNotTakeAnAlertAwayFromAPNs() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken())
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: "phone-1")
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await recorder.waitForCount(1))
            #expect(await harness.waitForSends(fake, 1))
            // Written to the stream, the alert still waits for APNs: the phone is its recipient.
            #expect(try harness.outbox().count == 1)
            fake.deliver(try #require(fake.sent(0)))
            #expect(await harness.waitForOutbox { $0.isEmpty })
            recorder.cancel()
        }
    }

    @Test func registrationsAndTheQueueSurviveARestart() async throws {
        try await withTemporaryDirectory(prefix: "push-restart") { directory in
            let path = databasePath(in: directory)
            let pending: V1.Alert
            do {
                let fake = FakeAPNs()
                let harness = try AlertServiceHarness(path: path, configure: delivering(to: fake))
                try await harness.register("phone-1", token: pushToken())
                try await harness.save("phone-1", ["BTC": rule(above: "5000")])
                harness.publish("BTC", "4900")
                harness.publish("BTC", "5010")
                #expect(await harness.waitForSends(fake, 1))
                pending = try #require(try harness.outbox().first)
                await harness.shutdown()  // never answered
            }
            let fake = FakeAPNs()
            let harness = try AlertServiceHarness(path: path, configure: delivering(to: fake))
            #expect(try await harness.device("phone-1").apnsToken == pushToken())
            #expect(await harness.waitForSends(fake, 1))
            let resent = try #require(fake.received.first)
            #expect(resent.apnsID == pending.id)
            fake.deliver(resent)
            #expect(await harness.waitForOutbox { $0.isEmpty })
            await harness.shutdown()
        }
    }

    @Test func theBackoffDoublesUpToItsCapWithJitter() {
        let delivery = PushDelivery(
            sender: nil, environment: .production, defaultTopic: "t", registry: DeviceRegistry([:]),
            configuration: PushDelivery.Configuration(initialBackoff: .seconds(1), maxBackoff: .seconds(30)),
            outboxExpiry: .seconds(3600), logger: .disabled)
        for attempt in 1...12 {
            let full = min(30_000, 1000 << (attempt - 1))
            for _ in 0..<50 {
                let delay = delivery.backoff(attempt: attempt)
                #expect(delay >= .milliseconds(full / 2) && delay <= .milliseconds(full), "attempt \(attempt): \(delay)")
            }
        }
    }

    @Test func apnsIDsAreTheAlertIDOrAStableUUIDMadeFromIt() {
        let uuid = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        #expect(PushDelivery.apnsID(alertID: uuid) == uuid)
        let made = PushDelivery.apnsID(alertID: "not-a-uuid")
        #expect(made == PushDelivery.apnsID(alertID: "not-a-uuid"))
        #expect(made != PushDelivery.apnsID(alertID: "not-a-uuid2"))
        #expect(made.count == 36)
        #expect(made.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
    }
}
