import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// The durable outbox: one pending alert per (device, symbol), the newest; sent first to a new StreamAlerts,
/// oldest first; gone once written to a stream; dropped when expired.
@Suite(.timeLimit(.minutes(2)))
struct AlertOutboxTests {
    @Test func pendingAlertsAreCoalescedPerSymbolAndSentOldestFirstBeforeLiveOnes() async throws {
        try await withAlertService { harness in
            let device = "outbox-device"
            try await harness.save(device, ["BTC": rule(above: "5000"), "ETH": rule(above: "3000")])

            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForOutbox { $0.map(\.summary) == ["BTC above 5000 @ 5012.3"] })
            let firstBTC = try #require(try harness.outbox().first)

            harness.publish("ETH", "2900")
            harness.publish("ETH", "3010")
            #expect(await harness.waitForOutbox { $0.count == 2 })
            let eth = try #require(try harness.outbox().first { $0.symbol == "ETH" })
            // The next BTC alert must carry a later millisecond than ETH's, so "oldest first" is observable and
            // differs from key (symbol) order.
            #expect(await eventually { wallClockMs() > eth.timeMs })

            harness.publish("BTC", "4970")  // back through the 0.5 % band (≤ 4975): re-armed
            harness.publish("BTC", "5020")
            #expect(await harness.waitForFired(3))
            #expect(await harness.waitForOutbox {
                Set($0.map(\.summary)) == ["ETH above 3000 @ 3010", "BTC above 5000 @ 5020"]
            })
            let newestBTC = try #require(try harness.outbox().first { $0.symbol == "BTC" })
            #expect(newestBTC.id != firstBTC.id)
            #expect(newestBTC.idempotencyKey != firstBTC.idempotencyKey)

            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await recorder.waitForCount(2))
            #expect(recorder.summaries == ["ETH above 3000 @ 3010", "BTC above 5000 @ 5020"])
            #expect(recorder.alerts.map(\.id) == [eth.id, newestBTC.id])

            // Then live alerts.
            #expect(await harness.waitForSubscribers(1))
            harness.publish("ETH", "2980")
            harness.publish("ETH", "3050")
            #expect(await recorder.waitForCount(3))
            #expect(recorder.summaries == ["ETH above 3000 @ 3010", "BTC above 5000 @ 5020", "ETH above 3000 @ 3050"])

            // Written to a stream, every one left the outbox, so a second call has nothing pending: the first thing
            // it receives is the next crossing.
            #expect(await harness.waitForOutbox { $0.isEmpty })
            recorder.cancel()
            #expect(await harness.waitForSubscribers(0))
            let second = AlertRecorder(client: client, device: device)
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4970")
            harness.publish("BTC", "5030")
            #expect(await second.waitForCount(1))
            #expect(second.summaries == ["BTC above 5000 @ 5030"])
            #expect(harness.stats.alertsFired == 5)
        }
    }

    @Test func expiredEntriesAreNotSentAndAreDeleted() async throws {
        try await withAlertService { harness in
            let device = try DeviceID(validating: "expiry-device")
            try await harness.save(device.rawValue, ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForOutbox { $0.count == 1 })

            // An ETH alert from two hours ago, as a service that was down that long would have left it.
            let stale = AlertNotification.make(
                FiredAlert(
                    device: device, symbol: PriceFixtures.symbol("ETH"), direction: .above,
                    threshold: PriceFixtures.price("3000"), price: PriceFixtures.price("3001"), generation: 1),
                id: "stale-alert", timeMs: wallClockMs() - 2 * 3_600_000)
            let staleKey = AlertStorage.outboxKey(device, PriceFixtures.symbol("ETH"))
            try harness.database.put(staleKey, stale.serializedBytes())

            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device.rawValue)
            #expect(await recorder.waitForCount(1))
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(try harness.database.get(staleKey) == nil)

            // The stale one never follows: the next alert on the stream is a new crossing.
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4970")
            harness.publish("BTC", "5020")
            #expect(await recorder.waitForCount(2))
            #expect(recorder.summaries == ["BTC above 5000 @ 5012.3", "BTC above 5000 @ 5020"])
        }
    }

    @Test func withATinyExpiryAPendingAlertExpiresBeforeTheNextStream() async throws {
        try await withAlertService(configure: { $0.alerts.outboxExpiry = .milliseconds(1) }) { harness in
            let device = "tiny-expiry-device"
            try await harness.save(device, ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            let pending = try #require(try harness.outbox().first)
            #expect(await eventually { wallClockMs() > pending.timeMs + 1 })

            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await harness.waitForSubscribers(1))
            #expect(await harness.waitForOutbox { $0.isEmpty })

            // Live alerts are not subject to the expiry; the first one is the first thing the stream carries.
            harness.publish("BTC", "4970")
            harness.publish("BTC", "5020")
            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5000 @ 5020"])
        }
    }
}
