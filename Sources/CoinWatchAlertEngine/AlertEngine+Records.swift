public import CoinWatchModel

/// A device's rule for one symbol, as stored.
public struct RuleRecord: Hashable, Sendable {
    public let device: DeviceID
    public let symbol: Symbol
    public let rule: AlertRule

    public init(device: DeviceID, symbol: Symbol, rule: AlertRule) {
        self.device = device
        self.symbol = symbol
        self.rule = rule
    }
}

/// Everything an engine needs to continue exactly where another left off.
public struct AlertEngineSnapshot: Sendable {
    public var rules: [RuleRecord]
    public var armStates: [ArmStateRecord]
    public var lastPrices: [Symbol: ExactDecimal]
    public var clock: UInt64

    public init(rules: [RuleRecord], armStates: [ArmStateRecord], lastPrices: [Symbol: ExactDecimal], clock: UInt64) {
        self.rules = rules
        self.armStates = armStates
        self.lastPrices = lastPrices
        self.clock = clock
    }
}

/// What a load restored and what it had to decide afresh.
public struct AlertEngineLoadReport: Sendable {
    /// Rule records loaded (all-off records are skipped and not counted).
    public var rules = 0
    /// Persisted side states applied as given.
    public var restoredStates = 0
    /// Persisted states ignored: for a side that is off, for an older threshold, or contradicting the
    /// prices (a waiting state for a symbol that has a price, or the reverse).
    public var discardedStates = 0
    /// Sides that had no usable persisted state and took a fresh one against the last price (so a
    /// missing state can make an alert wait for a re-arm, but never fire). Persist these.
    public var freshStates: [ArmStateRecord] = []
}

extension AlertEngine {
    /// The whole state, grouped by device (in device-number order), as a store keyed by device
    /// would iterate it — the order ``load(rules:armStates:lastPrices:clock:)`` reads fastest.
    public func snapshot() -> AlertEngineSnapshot {
        let ordered = books.sorted { $0.symbol < $1.symbol }
        var lastPrices: [Symbol: ExactDecimal] = [:]
        for book in ordered {
            if let price = book.lastPrice { lastPrices[book.symbol] = price }
        }
        let columns = ordered.map { (symbol: $0.symbol, above: $0.above.slots, below: $0.below.slots) }
        var rules: [RuleRecord] = []
        var armStates: [ArmStateRecord] = []
        rules.reserveCapacity(columns.reduce(0) { $0 + $1.above.count })
        armStates.reserveCapacity(activeSideCount)
        for (index, device) in devices.enumerated() {
            guard let device else { continue }
            for column in columns {
                let above = index < column.above.count ? column.above[index] : SideSlot()
                let below = index < column.below.count ? column.below[index] : SideSlot()
                guard above.phase != .off || below.phase != .off else { continue }
                rules.append(
                    RuleRecord(
                        device: device, symbol: column.symbol,
                        rule: AlertRule(
                            below: below.phase == .off ? nil : below.threshold,
                            above: above.phase == .off ? nil : above.threshold
                        )
                    )
                )
                if above.phase != .off {
                    armStates.append(
                        ArmStateRecord(
                            device: device, symbol: column.symbol, direction: .above, threshold: above.threshold,
                            state: above.state
                        )
                    )
                }
                if below.phase != .off {
                    armStates.append(
                        ArmStateRecord(
                            device: device, symbol: column.symbol, direction: .below, threshold: below.threshold,
                            state: below.state
                        )
                    )
                }
            }
        }
        return AlertEngineSnapshot(rules: rules, armStates: armStates, lastPrices: lastPrices, clock: clock)
    }
}
