import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// When prices arrive faster than the alert thread evaluates them, the queue stays bounded: past the backlog limit
/// prices are folded per symbol (docs/ALERTS.md, "When prices outrun the alert thread"). The alert thread is held
/// back so the backlog is built exactly.
@Suite(.timeLimit(.minutes(2)))
struct AlertTickBacklogTests {
    @Test func aFloodPastTheBacklogIsFoldedAndACrossingInsideItStillFires() async throws {
        try await withAlertService(configure: { $0.alerts.tickBacklogLimit = 4 }) { harness in
            try await harness.arm("flood-device", above: "5000", at: "4900")

            let worker = harness.service.alerts.worker
            worker.pause()
            for price in ["4901", "4902", "4903", "4904"] { harness.publish("BTC", price) }
            #expect(worker.queuedJobs == 4)
            // 200 more: one spike above the threshold in the middle, below it before and after.
            for index in 0..<200 { harness.publish("BTC", index == 100 ? "5012.3" : "\(4960 + index % 10)") }
            #expect(worker.queuedJobs == 5)
            #expect(harness.stats.ticksFolded == 200)
            worker.resume()

            // The four queued one by one, then the folded lowest (4960), highest (5012.3) and latest (4969).
            #expect(await harness.waitForEvaluated(1 + 4 + 3))
            #expect(await harness.waitForFired(1))
            #expect(await harness.waitForOutbox { $0.count == 1 })
            let alert = try #require(try harness.outbox().first)
            #expect(PriceFixtures.exact(alert.price) == PriceFixtures.price("5012.3"))
        }
    }

    @Test func aStaleMarkKeepsItsPlaceBetweenFoldedTicks() async throws {
        try await withAlertService(configure: { $0.alerts.tickBacklogLimit = 1 }) { harness in
            try await harness.arm("gap-device", above: "105", at: "100")

            let worker = harness.service.alerts.worker
            worker.pause()
            harness.publish("BTC", "101")  // queued
            harness.publish("BTC", "102")  // folded
            harness.service.hub.markStale([PriceFixtures.symbol("BTC")])  // queued after the fold, not folded
            harness.publish("BTC", "110")  // folded anew, after the mark
            #expect(worker.queuedJobs == 4)
            worker.resume()

            // 110 follows the stale period, so it is a resumption: the side is disarmed without an alert.
            #expect(await harness.waitForEvaluated(4))
            #expect(await eventually { harness.stats.crossingsSuppressed == 1 })
            #expect(harness.stats.alertsFired == 0)
            #expect(try harness.outbox().isEmpty)
        }
    }
}
