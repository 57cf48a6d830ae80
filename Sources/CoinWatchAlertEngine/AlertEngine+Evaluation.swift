public import CoinWatchModel

extension AlertEngine {
    /// Evaluates one tick and returns what it did.
    ///
    /// Allocates a result per call; a tick loop should prefer ``evaluate(symbol:price:into:)``.
    public func evaluate(symbol: Symbol, price: ExactDecimal) throws(AlertEngineError) -> EvaluationResult {
        var result = EvaluationResult()
        try evaluate(symbol: symbol, price: price, into: &result)
        return result
    }

    /// Evaluates one tick, replacing `result`'s contents (and reusing its storage).
    ///
    /// The first price of a symbol fires nothing and reports every waiting side's new state. Later
    /// prices fire the armed sides they reach and re-arm the disarmed sides whose boundary they reach,
    /// touching only those sides.
    ///
    /// - Parameter resuming: the previous price is not known to be current (the symbol's sources went
    ///   stale): a crossing between it and this price did not happen where anyone could see it, so the
    ///   armed sides this price reaches are disarmed without firing (counted in `result.suppressed`) and
    ///   fire again only after the price comes back through the band and crosses anew. Re-arming works
    ///   as on any tick.
    /// - Throws: `invalidPrice` for a zero or negative price, leaving the engine unchanged: a broken
    ///   feed must not fire every `below` rule at once.
    public func evaluate(
        symbol: Symbol, price: ExactDecimal, resuming: Bool = false, into result: inout EvaluationResult
    ) throws(AlertEngineError) {
        guard price > .zero else {
            throw AlertEngineError(code: .invalidPrice, message: "\(symbol) price must be positive (got \(price))")
        }
        result.removeAll()
        clock += 1
        result.clock = clock
        let book = book(for: symbol)
        let units = PriceUnits.units(price)
        let clock = clock
        if book.lastPrice == nil {
            book.lastPrice = price
            for direction in AlertDirection.allCases {
                book.withSide(direction) { side in
                    side.placeWaiting(
                        side.oriented(units), clock: clock, devices: devices, symbol: symbol,
                        into: &result.armStateChanges
                    )
                    side.rebuildIndexes()
                }
            }
            return
        }
        book.lastPrice = price
        book.above.tick(
            units, decimalPrice: price, clock: clock, devices: devices, symbol: symbol, fire: !resuming, into: &result)
        book.below.tick(
            -units, decimalPrice: price, clock: clock, devices: devices, symbol: symbol, fire: !resuming, into: &result)
    }
}
