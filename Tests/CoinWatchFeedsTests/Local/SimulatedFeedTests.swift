import CoinWatchModel
import CoinWatchTestSupport
import Testing
import CoinWatchService
@testable import CoinWatchFeeds

@Suite(.timeLimit(.minutes(3)))
struct SimulatedFeedTests {
    typealias F = PriceFixtures

    static func run(seed: UInt64, steps: Int) throws -> [[PriceTick]] {
        var market = try SimulatedMarket(seed: seed)
        return (0..<steps).map { market.step(timeMs: Int64($0)) }
    }

    @Test func sameSeedSamePricesOtherSeedOtherPrices() throws {
        let first = try Self.run(seed: 42, steps: 500)
        let again = try Self.run(seed: 42, steps: 500)
        let other = try Self.run(seed: 43, steps: 500)
        #expect(first == again)
        #expect(first != other)
        #expect(first[0].map(\.symbol.rawValue) == ["BTC", "ETH", "SOL", "XRP", "DOGE", "ADA", "LTC", "AVAX"])
    }

    @Test func pricesStayPositiveAtTheInstrumentsPrecisionAndNearTheirLevel() throws {
        let steps = try Self.run(seed: 7, steps: 5_000)
        for (index, instrument) in SimulatedInstrument.defaults.enumerated() {
            let prices = steps.map { $0[index].price }
            #expect(prices.allSatisfy { $0 > .zero && $0.scale <= instrument.decimals })
            // The walk moves, and the pull toward the start keeps it above a tenth of where it began.
            #expect(Set(prices).count > 10)
            let tenth = ExactDecimal(mantissa: instrument.start.mantissa, scale: instrument.start.scale + 1)!
            #expect(prices.allSatisfy { $0 > tenth })
        }
    }

    @Test func refusesAStartPriceFinerThanItsPrecision() {
        let instrument = SimulatedInstrument(
            symbol: F.symbol("BTC"), start: F.price("1.234"), decimals: 2, volatility: 0.1)
        #expect(throws: FeedError.self) {
            _ = try SimulatedMarket(seed: 1, instruments: [instrument])
        }
    }

    @Test func feedPublishesIntoTheHubUntilStopped() async throws {
        let hub = try PriceHub()
        let feed = try SimulatedFeed(publishingTo: hub, configuration: SimulatedFeed.Configuration(seed: 9, ticksPerSecond: 200))
        feed.start()
        feed.start()
        #expect(await eventually { hub.knownSymbols.count == 8 && feed.publishedTicks >= 80 })
        feed.stop()
        feed.stop()
        let published = feed.publishedTicks
        try await Task.sleep(for: .milliseconds(50))
        #expect(feed.publishedTicks == published)
        #expect(published % 8 == 0)
        // The hub saw the walk of seed 9: its first step is the first batch the feed published.
        let expected = try Self.run(seed: 9, steps: published / 8).last!
        #expect(hub.latestPrices().sorted { $0.symbol < $1.symbol }.map(\.price)
            == expected.sorted { $0.symbol < $1.symbol }.map(\.price))
        hub.close()
    }
}
