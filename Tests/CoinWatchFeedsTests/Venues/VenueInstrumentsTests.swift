import Testing
@testable import CoinWatchFeeds

struct VenueInstrumentsTests {
    @Test func subscribedInstrumentsAreFoundByTheirBytes() {
        // Several of one length, differing in their first eight bytes or only after them (compared eight at a time).
        let names = [
            "BINANCE:BTCUSDT", "BTC-USD", "ETH-USD", "btcusdt", "BTC/USD", "BINANCE:DOGEUSDT", "BTC-USD",
            "BINANCE:ETHUSDT", "BINANCE:SOLUSDT", "KRAKENFX:BTCUSD", "BINANCE:BTCUSDC",
        ]
        let instruments = VenueInstruments(names)
        #expect(instruments.count == 10)
        for name in names {
            let position = instruments.position(of: name)
            #expect(position.map { instruments[$0] } == name)
            let found = Array(name.utf8).withUnsafeBytes { instruments.name($0) }
            #expect(found == name)
        }
        for other in ["", "BTC-US", "BTC-USDT", "ETH/USD", "BTCUSDT", "binance:btcusdt", "BINANCE:XRPUSDT", "AINANCE:BTCUSDT"] {
            #expect(instruments.position(of: other) == nil, "\(other)")
            #expect(Array(other.utf8).withUnsafeBytes { instruments.name($0) } == other)
        }
        #expect(VenueInstruments().position(of: "BTC-USD") == nil)
    }
}
