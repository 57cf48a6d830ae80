import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// What the alert engine does across a stale period (docs/ALERTS.md, "Stale prices"): the first price after it is
/// a resumption, so a crossing between the last price before the gap and the first after it fires nothing; the
/// side is disarmed and fires again only after the price comes back through the band and crosses anew.
@Suite(.timeLimit(.minutes(2)))
struct AlertStaleTests {
    @Test func aCrossingAcrossAStalePeriodDoesNotFire() async throws {
        try await withAlertService { harness in
            try await harness.save("stale-device", ["BTC": rule(above: "105"), "ETH": rule(below: "90")])
            harness.publish("BTC", "100")
            harness.publish("ETH", "100")
            #expect(await harness.waitForEvaluated(2))

            // BTC's sources go quiet; ETH's do not.
            harness.service.hub.markStale([PriceFixtures.symbol("BTC")])
            harness.publish("BTC", "110")
            harness.publish("ETH", "85")
            #expect(await harness.waitForEvaluated(4))
            #expect(await harness.waitForFired(1))
            #expect(harness.stats.crossingsSuppressed == 1)
            #expect(try harness.outbox().map(\.symbol) == ["ETH"])

            // The suppressed side is disarmed: 106 does not fire, back below the band (105 × 0.995) re-arms it,
            // and the next crossing fires as usual.
            harness.publish("BTC", "106")
            harness.publish("BTC", "104")
            harness.publish("BTC", "105.5")
            #expect(await harness.waitForEvaluated(7))
            #expect(await harness.waitForFired(2))
            #expect(await harness.waitForOutbox { $0.map(\.symbol).sorted() == ["BTC", "ETH"] })
            #expect(try harness.outbox().first { $0.symbol == "BTC" }.flatMap { PriceFixtures.exact($0.price) }
                == PriceFixtures.price("105.5"))
        }
    }

    @Test func withoutAStalePeriodTheSameMoveFires() async throws {
        try await withAlertService { harness in
            try await harness.save("fresh-device", ["BTC": rule(above: "105")])
            harness.publish("BTC", "100")
            harness.publish("BTC", "110")
            #expect(await harness.waitForEvaluated(2))
            #expect(await harness.waitForFired(1))
            #expect(harness.stats.crossingsSuppressed == 0)
        }
    }

    @Test func aStalePeriodWithoutACrossingChangesNothing() async throws {
        try await withAlertService { harness in
            try await harness.save("calm-device", ["BTC": rule(above: "105")])
            harness.publish("BTC", "100")
            harness.service.hub.markStale([PriceFixtures.symbol("BTC")])
            harness.publish("BTC", "101")
            // Still armed: the next crossing fires.
            harness.publish("BTC", "106")
            #expect(await harness.waitForEvaluated(3))
            #expect(await harness.waitForFired(1))
            #expect(harness.stats.crossingsSuppressed == 0)
        }
    }
}
