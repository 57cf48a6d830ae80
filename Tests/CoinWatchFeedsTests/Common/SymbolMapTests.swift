import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct SymbolMapTests {
    typealias F = PriceFixtures

    @Test func liveInstrumentsMapToUSDSymbols() throws {
        let map = SymbolMap()
        for (text, expected) in [
            ("BTCUSDT", "BTC"), ("btcusdt", "BTC"), ("BTC-USD", "BTC"), ("BTC/USD", "BTC"), ("XBT/USD", "BTC"),
            ("BINANCE:ETHUSDT", "ETH"), ("XDG/USD", "DOGE"), ("SOL_USDT", "SOL"),
        ] {
            #expect(try map.usdSymbol(text) == F.symbol(expected), "\(text)")
        }
        for text in ["BTC/EUR", "BTCEUR", "ETHBTC", "BTC", "BTC-USDC", ":USD", "-USD"] {
            #expect(throws: ValidationError.self, "\(text)") { try map.usdSymbol(text) }
        }
    }

    @Test func quotesAndAliasesAreConfigurable() throws {
        var map = SymbolMap()
        try map.setUSDQuotes(parsing: "USD, usdc")
        #expect(try map.usdSymbol("BTC-USDC") == F.symbol("BTC"))
        #expect(throws: ValidationError.self) { try map.usdSymbol("BTCUSDT") }
        try map.add(parsing: "WBTC=BTC,kraken:BTC=XBT/USD", venues: Venues.names)
        #expect(try map.usdSymbol("WBTC/USD") == F.symbol("BTC"))
        #expect(map.instrument(venue: "kraken", symbol: F.symbol("BTC")) { $0 + "/USD" } == "XBT/USD")
        #expect(map.instrument(venue: "kraken", symbol: F.symbol("ETH")) { $0 + "/USD" } == "ETH/USD")
        for bad in ["nope", "mars:BTC=X", "kraken:B=X", "kraken:BTC=", "a b=BTC", "X=bad symbol"] {
            #expect(throws: FeedError.self, "\(bad)") { try map.add(parsing: bad, venues: Venues.names) }
        }
        #expect(throws: FeedError.self) { try map.setUSDQuotes(parsing: "USD,,") }
    }

    @Test func recordedInstrumentsMapLeniently() throws {
        let cases = [
            ("BINANCE:BTCUSDT", "BTC"), ("btcusdt", "BTC"), ("ETHUSD", "ETH"), ("SOLUSDC", "SOL"), ("BNBBUSD", "BNB"),
            ("BTCEUR", "BTC"), ("COINBASE:ETH-USD", "ETH"), ("KRAKEN:XRP/EUR", "XRP"), ("ADA", "ADA"), ("USDT", "USDT"),
            ("OP", "OP"), ("XBT/USD", "BTC"),
        ]
        for (text, expected) in cases {
            #expect(try SymbolMap().asset(text).rawValue == expected, "\(text)")
        }
        #expect(throws: ValidationError.self) { try SymbolMap().asset("BINANCE:") }
    }
}
