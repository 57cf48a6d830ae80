import CoinWatchModel
import CoinWatchService
import Testing
@testable import CoinWatchFeeds

/// The median over fresh sources, stale marking and republishing when a source ages out, on a manual clock.
struct PriceAggregatorTests {
    typealias F = PriceFixtures

    static func tick(_ symbol: String, _ price: String, _ timeMs: Int64 = 1) -> PriceTick {
        PriceTick(symbol: F.symbol(symbol), price: F.price(price), timeMs: timeMs)
    }

    @Test func theMedianOfThreeIgnoresAnOutlier() throws {
        let hub = try PriceHub()
        let clock = ManualClock()
        let aggregator = PriceAggregator(hub: hub, clock: clock)
        let (a, b, c) = (aggregator.input(named: "a"), aggregator.input(named: "b"), aggregator.input(named: "c"))
        a.publish([Self.tick("BTC", "64250.5", 10)])
        #expect(hub.latestPrice(of: F.symbol("BTC")) == PriceTick(
            symbol: F.symbol("BTC"), price: F.price("64250.5"), timeMs: 10, sources: 1))
        b.publish([Self.tick("BTC", "99999", 11)])   // the outlier
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.price == F.price("82124.75"))   // two: the mean of the middle
        c.publish([Self.tick("BTC", "64251.5", 12)])
        #expect(hub.latestPrice(of: F.symbol("BTC")) == PriceTick(
            symbol: F.symbol("BTC"), price: F.price("64251.5"), timeMs: 12, sources: 3))
        a.publish([Self.tick("BTC", "64252", 13)])
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.price == F.price("64252"))
        hub.close()
    }

    @Test func aStaleSourceLeavesTheMedianOfTheRestAndAllStaleMarksTheSymbol() throws {
        let hub = try PriceHub()
        let clock = ManualClock()
        let aggregator = PriceAggregator(hub: hub, configuration: .init(maxAge: .seconds(10)), clock: clock)
        let (a, b, c) = (aggregator.input(named: "a"), aggregator.input(named: "b"), aggregator.input(named: "c"))
        a.publish([Self.tick("ETH", "3000")])
        clock.advance(.seconds(4))
        b.publish([Self.tick("ETH", "3010")])
        c.publish([Self.tick("ETH", "3020")])
        #expect(hub.latestPrice(of: F.symbol("ETH"))?.sources == 3)
        #expect(hub.latestPrice(of: F.symbol("ETH"))?.price == F.price("3010"))
        clock.advance(.seconds(5))   // a is 9 s old: still fresh
        let due = aggregator.sweep()
        #expect(due == clock.monotonicNanos() + 1_000_000_000)
        clock.advance(.seconds(1))   // a is 10 s old: out; the median of b and c is republished
        aggregator.sweep()
        #expect(hub.latestPrice(of: F.symbol("ETH")) == PriceTick(
            symbol: F.symbol("ETH"), price: F.price("3015"), timeMs: 1, sources: 2))
        #expect(!hub.latestPrice(of: F.symbol("ETH"))!.isStale)
        clock.advance(.seconds(6))   // b and c out too
        #expect(aggregator.sweep() == .max)
        #expect(hub.latestPrice(of: F.symbol("ETH"))?.isStale == true)
        #expect(aggregator.staleSymbols == [F.symbol("ETH")])
        // A second sweep marks nothing again; the next price is fresh.
        aggregator.sweep()
        b.publish([Self.tick("ETH", "3030")])
        #expect(hub.latestPrice(of: F.symbol("ETH")) == PriceTick(
            symbol: F.symbol("ETH"), price: F.price("3030"), timeMs: 1, sources: 1))
        #expect(aggregator.staleSymbols.isEmpty)
        hub.close()
    }

    @Test func symbolsRestoredFromTheStoreTurnStaleWithoutAQuote() throws {
        let hub = try PriceHub()
        hub.publish([Self.tick("SOL", "145"), Self.tick("BTC", "1")])
        let clock = ManualClock()
        let aggregator = PriceAggregator(hub: hub, clock: clock, knownSymbols: [F.symbol("SOL"), F.symbol("BTC")])
        let input = aggregator.input(named: "only")
        clock.advance(.seconds(3))
        input.publish([Self.tick("BTC", "2")])
        clock.advance(.seconds(7))
        aggregator.sweep()
        #expect(hub.latestPrice(of: F.symbol("SOL"))?.isStale == true)
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.isStale == false)
        hub.close()
    }

    @Test func theMeanOfTheMiddleTwoStaysExactOrRoundsToEven() {
        typealias Quote = PriceAggregator.Quote
        func median(_ prices: [String]) -> String? {
            let quotes: [Quote?] = prices.map { Quote(price: F.price($0), timeMs: 0, arrivedNanos: 100) } + [nil]
            return PriceAggregator.median(quotes, cutoff: 0, maxAge: 10).map { "\($0.0)/\($0.1)" }
        }
        #expect(median(["1", "2"]) == "1.5/2")
        #expect(median(["0.000000000000000001", "0.000000000000000002"]) == "0.000000000000000002/2")
        #expect(median(["3", "1", "2"]) == "2/3")
        #expect(median(["9223372036854775807", "9223372036854775807"]) == "9223372036854775807/2")
        #expect(median([]) == nil)
    }
}
