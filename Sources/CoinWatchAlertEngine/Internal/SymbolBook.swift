import CoinWatchModel

/// Everything the engine knows about one symbol: its last price and both directions' rule sides.
///
/// A class so the engine's list holds a reference and a tick mutates the indexes in place,
/// without copy-on-write of the large arrays inside.
final class SymbolBook {
    let symbol: Symbol
    var lastPrice: ExactDecimal?
    var above: SideBook
    var below: SideBook

    init(symbol: Symbol, configuration: AlertEngine.Configuration) {
        self.symbol = symbol
        self.above = SideBook(
            direction: .above, factor: configuration.aboveFactor, chunkSize: configuration.chunkSize
        )
        self.below = SideBook(
            direction: .below, factor: configuration.belowFactor, chunkSize: configuration.chunkSize
        )
    }

    /// Runs `body` on one direction's side book in place.
    @inline(__always)
    func withSide<Result>(_ direction: AlertDirection, _ body: (inout SideBook) -> Result) -> Result {
        switch direction {
        case .above: body(&above)
        case .below: body(&below)
        }
    }

    func side(_ direction: AlertDirection) -> SideBook {
        direction == .above ? above : below
    }
}
