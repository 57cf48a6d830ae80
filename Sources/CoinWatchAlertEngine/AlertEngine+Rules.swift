public import CoinWatchModel

extension AlertEngine {
    /// Saves a device's rule for a symbol, replacing the previous one.
    ///
    /// A side whose threshold is unchanged keeps its state; a new or changed side starts fresh
    /// against the last price (armed only if the price is strictly on its near side), so saving never
    /// fires. An all-off rule removes the device's rule for the symbol.
    ///
    /// - Returns: the state of every side that was (re)created, to persist. Sides turned off are not
    ///   reported; delete their persisted state with the rule.
    /// - Throws: `invalidRule` for a negative threshold; the engine is then unchanged.
    @discardableResult
    public func setRule(
        device: DeviceID, symbol: Symbol, rule: AlertRule
    ) throws(AlertEngineError) -> [ArmStateRecord] {
        try Self.validate(rule, device: device, symbol: symbol)
        clock += 1
        guard !rule.isOff else {
            removeRule(device: device, symbol: symbol)
            return []
        }
        let number = number(for: device)
        let book = book(for: symbol)
        let price = book.lastPrice.map(PriceUnits.units)
        var changes: [ArmStateRecord] = []
        for direction in AlertDirection.allCases {
            let clock = clock
            let change: (added: Int, state: ArmState?, threshold: ExactDecimal?) = book.withSide(direction) { side in
                if let threshold = rule.threshold(direction) {
                    let wasOn = side.slot(number) != nil
                    let state = side.set(number, threshold: threshold, price: price.map(side.oriented), clock: clock)
                    return (wasOn ? 0 : 1, state, threshold)
                }
                return (side.clear(number) ? -1 : 0, nil, nil)
            }
            if change.added > 0 { sideCounts[Int(number)] += 1 }
            if change.added < 0 { sideCounts[Int(number)] -= 1 }
            if let state = change.state, let threshold = change.threshold {
                changes.append(
                    ArmStateRecord(
                        device: device, symbol: symbol, direction: direction, threshold: threshold, state: state
                    )
                )
            }
        }
        releaseIfUnused(number)
        return changes
    }

    /// Removes a device's rule for one symbol; `false` when it had none.
    @discardableResult
    public func removeRule(device: DeviceID, symbol: Symbol) -> Bool {
        guard let number = deviceNumbers[device], let book = existingBook(symbol) else { return false }
        let removed = clearSides(of: number, in: book)
        releaseIfUnused(number)
        return removed
    }

    /// Removes every rule of a device; `false` when it had none.
    @discardableResult
    public func removeDevice(_ device: DeviceID) -> Bool {
        guard let number = deviceNumbers[device] else { return false }
        var removed = false
        for book in books where clearSides(of: number, in: book) {
            removed = true
        }
        releaseIfUnused(number)
        return removed
    }

    private func clearSides(of number: UInt32, in book: SymbolBook) -> Bool {
        var removed = 0
        for direction in AlertDirection.allCases where book.withSide(direction, { $0.clear(number) }) {
            removed += 1
        }
        sideCounts[Int(number)] -= UInt32(removed)
        return removed > 0
    }

    static func validate(_ rule: AlertRule, device: DeviceID, symbol: Symbol) throws(AlertEngineError) {
        // Called for every rule of a start-up: the two sides are spelled out rather than looped over
        // `AlertDirection.allCases`, which built an array per call.
        func check(_ threshold: ExactDecimal?, _ direction: AlertDirection) throws(AlertEngineError) {
            guard let threshold, threshold.isNegative else { return }
            throw AlertEngineError(
                code: .invalidRule,
                message: "\(device) \(symbol) \(direction) threshold must not be negative (got \(threshold))"
            )
        }
        try check(rule.above, .above)
        try check(rule.below, .below)
    }
}
