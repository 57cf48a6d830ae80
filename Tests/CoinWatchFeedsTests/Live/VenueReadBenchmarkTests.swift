import Testing
@testable import CoinWatchFeeds

/// The in-process read benchmark measures the real path only if every message it feeds is read and published.
struct VenueReadBenchmarkTests {
    @Test func everyMessageFedIsReadIntoOnePrice() {
        let outcome = VenueReadBenchmark.run(messages: 20_000)
        #expect(outcome.messages >= 20_000)
        #expect(outcome.published == outcome.messages)
        #expect(outcome.nanosecondsPerMessage > 0)
    }

    @Test func floodMessagesAreFinnhubTradesWithExactPrices() throws {
        var context = VenueReadContext(instruments: VenueInstruments(["BINANCE:BTCUSDT"]))
        let text = VenueReadBenchmark.floodMessage(1_234)
        let message = try Array(text.utf8).withUnsafeBytes { try FinnhubVenue().read($0, &context) }
        #expect(message == .trades([VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("60234.34"), timeMs: 1_718_000_001_234)]))
    }

    typealias F = PriceFixtures
}
