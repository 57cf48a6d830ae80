import CoinWatchModel
import CoinWatchService
import CoinWatchTestSupport

/// Values and waits shared by the feed tests.
enum PriceFixtures {
    static func symbol(_ text: String) -> Symbol {
        try! Symbol(validating: text)
    }

    static func price(_ text: String) -> ExactDecimal {
        ExactDecimal(text)!
    }

    static func tick(_ symbol: String, _ price: String, timeMs: Int64 = 1_700_000_000_000) -> PriceTick {
        PriceTick(symbol: Self.symbol(symbol), price: Self.price(price), timeMs: timeMs)
    }
}
