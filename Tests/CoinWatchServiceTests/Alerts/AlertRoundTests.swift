import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Testing
import CoinWatchStore
@testable import CoinWatchService

/// Jobs that share one round of the alert thread (and so one LevelDB batch) see each other's outbox changes. The
/// alert thread is held back so the jobs are queued together, exactly.
@Suite(.timeLimit(.minutes(2)))
struct AlertRoundTests {
    /// An alert from two hours ago, past the default one-hour expiry.
    static func staleAlert(_ device: DeviceID, _ symbol: String) -> V1.Alert {
        AlertNotification.make(
            FiredAlert(
                device: device, symbol: PriceFixtures.symbol(symbol), direction: .above,
                threshold: PriceFixtures.price("4000"), price: PriceFixtures.price("4001"), generation: 1),
            id: "stale-alert", timeMs: wallClockMs() - 2 * 3_600_000)
    }

    @Test func aStreamThatSubscribesInTheRoundOfACrossingReceivesIt() async throws {
        try await withAlertService { harness in
            let device = "same-round-device"
            try await harness.arm(device, above: "5000", at: "4900")

            let worker = harness.service.alerts.worker
            worker.pause()
            harness.publish("BTC", "5012.3")
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await eventually { worker.queuedJobs == 2 })  // the tick, then the subscription
            worker.resume()

            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5000 @ 5012.3"])
            #expect(await harness.waitForOutbox { $0.isEmpty })
        }
    }

    @Test func anExpiredEntryDroppedInTheRoundOfANewerAlertLeavesTheNewerOne() async throws {
        try await withAlertService { harness in
            let device = try DeviceID(validating: "stale-round-device")
            try await harness.arm(device.rawValue, above: "5000", at: "4900")
            let key = AlertStorage.outboxKey(device, PriceFixtures.symbol("BTC"))
            try harness.database.put(key, Self.staleAlert(device, "BTC").serializedBytes())

            let worker = harness.service.alerts.worker
            worker.pause()
            harness.publish("BTC", "5012.3")  // replaces the stale entry
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device.rawValue)  // finds the stale entry expired
            #expect(await eventually { worker.queuedJobs == 2 })
            worker.resume()

            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5000 @ 5012.3"])
            #expect(recorder.alerts.allSatisfy { $0.id != "stale-alert" })
        }
    }

    @Test func aLateDeliveryOfAnOlderAlertLeavesTheNewerOneInTheOutbox() async throws {
        try await withAlertService { harness in
            let device = try DeviceID(validating: "late-delivery-device")
            try await harness.save(device.rawValue, ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            let older = try #require(try harness.outbox().first)
            harness.publish("BTC", "4970")  // re-armed
            #expect(await harness.waitForEvaluated(3))

            let worker = harness.service.alerts.worker
            worker.pause()
            harness.publish("BTC", "5020")  // a newer alert under the same outbox key
            // A stream's write of the older alert confirmed after it: the newer one must stay.
            worker.post(.delivered(key: AlertStorage.outboxKey(device, PriceFixtures.symbol("BTC")), alertID: older.id, device: device))
            #expect(worker.queuedJobs == 2)
            worker.resume()

            #expect(await harness.waitForFired(2))
            #expect(await harness.waitForOutbox { $0.map(\.summary) == ["BTC above 5000 @ 5020"] })
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device.rawValue)
            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5000 @ 5020"])
        }
    }
}
