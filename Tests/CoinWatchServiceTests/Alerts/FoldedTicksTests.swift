import CoinWatchModel
import Testing
@testable import CoinWatchService

/// `FoldedTicks` keeps, per symbol, the ticks that decide crossings: the lowest, the highest and the latest price,
/// in the order they arrived, so evaluating them is evaluating a subsequence of the real ticks.
struct FoldedTicksTests {
    static func fold(_ ticks: [(String, String)]) -> FoldedTicks {
        var folded = FoldedTicks()
        for (symbol, price) in ticks { folded.fold(PriceFixtures.tick(symbol, price)) }
        return folded
    }

    static func summary(_ folded: FoldedTicks) -> [String] {
        folded.ticks.map { "\($0.symbol.rawValue) \($0.price)" }
    }

    @Test func keepsEachSymbolsLowestHighestAndLatestInArrivalOrder() {
        let folded = Self.fold([
            ("BTC", "100"), ("ETH", "5"), ("BTC", "120"), ("BTC", "90"), ("ETH", "4"), ("BTC", "110"), ("BTC", "95"),
        ])
        #expect(folded.count == 7)
        #expect(Self.summary(folded) == ["BTC 120", "BTC 90", "BTC 95", "ETH 5", "ETH 4"])
    }

    @Test func aTickThatIsAnExtremeAndTheLatestIsKeptOnce() {
        #expect(Self.summary(Self.fold([("BTC", "100"), ("BTC", "120")])) == ["BTC 100", "BTC 120"])
        #expect(Self.summary(Self.fold([("BTC", "100")])) == ["BTC 100"])
        #expect(Self.summary(Self.fold([("BTC", "100"), ("BTC", "100"), ("BTC", "100")])) == ["BTC 100", "BTC 100"])
    }

    /// On random walks: the kept ticks are a subsequence of the folded ones, at most three, holding the lowest and
    /// the highest price and ending with the latest; so every level between the lowest and the highest is crossed.
    @Test func theKeptTicksAreASubsequenceWithBothExtremesAndTheLatest() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let prices = (0..<Int.random(in: 1...40, using: &generator)).map { _ in
                ExactDecimal(mantissa: Int64.random(in: 1...60, using: &generator), scale: 0)!
            }
            var folded = FoldedTicks()
            for price in prices { folded.fold(PriceTick(symbol: PriceFixtures.symbol("BTC"), price: price, timeMs: 0)) }
            let kept = folded.ticks.map(\.price)
            #expect(kept.count <= 3)
            #expect(kept.last == prices.last)
            #expect(kept.contains(prices.min()!) && kept.contains(prices.max()!))
            var rest = prices[...]
            for price in kept {
                guard let index = rest.firstIndex(of: price) else {
                    Issue.record("\(kept) is not a subsequence of \(prices)")
                    break
                }
                rest = rest[(index + 1)...]
            }
        }
    }
}
