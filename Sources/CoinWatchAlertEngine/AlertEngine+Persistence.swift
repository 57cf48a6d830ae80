import CoinWatchModel

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
    /// Replaces the engine's whole state, as after a restart, in O(n log n).
    ///
    /// Records may come in any order; records of one device next to each other (as a key-ordered
    /// store iteration gives them) load fastest.
    ///
    /// - Parameters:
    ///   - rules: one record per (device, symbol); all-off records are skipped.
    ///   - armStates: persisted side states; states that no longer match a rule are discarded.
    ///   - lastPrices: each symbol's last price; sides of a symbol without one wait for its first tick.
    ///   - clock: the persisted ``clock``; it is raised to the largest restored generation if lower.
    /// - Throws: `invalidRule`, `invalidPrice` or `duplicateRecord`, with the engine unchanged.
    @discardableResult
    public func load(
        rules: [RuleRecord],
        armStates: [ArmStateRecord],
        lastPrices: [Symbol: ExactDecimal],
        clock: UInt64
    ) throws(AlertEngineError) -> AlertEngineLoadReport {
        // Everything is built in a fresh engine and moved in only on success. The work is done in
        // bulk per symbol and direction: devices are numbered first, so every slot array is
        // allocated once at its final size, and each index is sorted once.
        let fresh = AlertEngine(configuration: configuration)
        var loader = BulkLoader(engine: fresh)
        for (symbol, price) in lastPrices {
            guard price > .zero else {
                throw AlertEngineError(
                    code: .invalidPrice, message: "\(symbol) last price must be positive (got \(price))"
                )
            }
            fresh.books[loader.bookIndex(symbol)].lastPrice = price
        }

        // Pass 1: number the devices and bucket the rules by symbol.
        var rulesByBook: [[(record: Int, device: UInt32)]] = []
        fresh.deviceNumbers.reserveCapacity(rules.count)
        for position in rules.indices where !rules[position].rule.isOff {
            try Self.validate(rules[position].rule, device: rules[position].device, symbol: rules[position].symbol)
            let book = loader.bookIndex(rules[position].symbol)
            while rulesByBook.count <= book { rulesByBook.append([]) }
            rulesByBook[book].append((position, loader.number(rules[position].device, creating: true) ?? 0))
        }

        // Pass 2: fill each book's slots.
        let deviceCount = fresh.devices.count
        var report = AlertEngineLoadReport()
        for (bookPosition, bucket) in rulesByBook.enumerated() {
            let book = fresh.books[bookPosition]
            var seen = [Bool](repeating: false, count: deviceCount)
            for (position, device) in bucket {
                guard !seen[Int(device)] else {
                    throw AlertEngineError(
                        code: .duplicateRecord, message: "two rules for \(rules[position].device) \(book.symbol)"
                    )
                }
                seen[Int(device)] = true
            }
            report.rules += bucket.count
            for direction in AlertDirection.allCases {
                book.withSide(direction) { side in
                    side.slots = [SideSlot](repeating: SideSlot(), count: deviceCount)
                    for (position, device) in bucket {
                        guard let threshold = rules[position].rule.threshold(direction) else { continue }
                        let key = side.oriented(PriceUnits.units(threshold))
                        side.slots[Int(device)] = SideSlot(key: key, threshold: threshold, phase: .awaitingPrice)
                        fresh.sideCounts[Int(device)] += 1
                    }
                }
            }
        }

        // Pass 3: apply the persisted states, bucketed by symbol and direction.
        var statesByBook: [[(record: Int, device: UInt32)]] = Array(repeating: [], count: fresh.books.count * 2)
        for position in armStates.indices {
            guard let device = loader.number(armStates[position].device, creating: false),
                  let book = loader.existingBookIndex(armStates[position].symbol)
            else {
                report.discardedStates += 1
                continue
            }
            statesByBook[book * 2 + (armStates[position].direction == .above ? 0 : 1)].append((position, device))
        }
        var newestGeneration = clock
        for (bucketPosition, bucket) in statesByBook.enumerated() where !bucket.isEmpty {
            let book = fresh.books[bucketPosition / 2]
            let direction: AlertDirection = bucketPosition % 2 == 0 ? .above : .below
            let hasPrice = book.lastPrice != nil
            let duplicate: Int? = book.withSide(direction) { side in
                for (position, device) in bucket {
                    let state = armStates[position].state
                    let threshold = armStates[position].threshold
                    switch side.restore(device, threshold: threshold, state: state, hasPrice: hasPrice) {
                    case .restored:
                        report.restoredStates += 1
                        if case .armed(let generation) = state {
                            newestGeneration = max(newestGeneration, generation)
                        }
                    case .discarded:
                        report.discardedStates += 1
                    case .duplicate:
                        return position
                    }
                }
                return nil
            }
            if let duplicate {
                let record = armStates[duplicate]
                throw AlertEngineError(
                    code: .duplicateRecord,
                    message: "two arm states for \(record.device) \(record.symbol) \(record.direction)"
                )
            }
        }

        // Sides with no usable state start fresh against the price, at a new clock tick.
        fresh.clock = newestGeneration
        let needsFreshStates = fresh.books.contains { book in
            book.lastPrice != nil && (book.above.hasWaiting || book.below.hasWaiting)
        }
        if needsFreshStates { fresh.clock += 1 }
        for book in fresh.books {
            for direction in AlertDirection.allCases {
                book.withSide(direction) { side in
                    if let price = book.lastPrice {
                        side.placeWaiting(
                            side.oriented(PriceUnits.units(price)), clock: fresh.clock, devices: fresh.devices,
                            symbol: book.symbol, into: &report.freshStates
                        )
                    }
                    side.rebuildIndexes()
                }
            }
        }

        self.clock = fresh.clock
        devices = fresh.devices
        deviceNumbers = fresh.deviceNumbers
        sideCounts = fresh.sideCounts
        freeNumbers = []
        books = fresh.books
        bookIndexes = fresh.bookIndexes
        return report
    }

    /// Loads a ``snapshot()``.
    @discardableResult
    public func load(_ snapshot: AlertEngineSnapshot) throws(AlertEngineError) -> AlertEngineLoadReport {
        try load(
            rules: snapshot.rules, armStates: snapshot.armStates, lastPrices: snapshot.lastPrices, clock: snapshot.clock
        )
    }

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

/// Lookups with a small cache: stored records come grouped by device, and a device's records cycle
/// through a handful of symbols, so most lookups skip hashing entirely.
private struct BulkLoader {
    let engine: AlertEngine
    private var lastDevice: (id: DeviceID, number: UInt32)?
    /// Every book so far, searched linearly (symbols are short strings, compared without hashing)
    /// while there are few of them.
    private var recentSymbols: [(symbol: Symbol, index: Int)] = []

    init(engine: AlertEngine) {
        self.engine = engine
    }

    mutating func number(_ device: DeviceID, creating: Bool) -> UInt32? {
        if let lastDevice, lastDevice.id == device { return lastDevice.number }
        let number: UInt32
        if creating {
            number = engine.newNumber(for: device)
        } else {
            guard let known = engine.deviceNumbers[device] else { return nil }
            number = known
        }
        lastDevice = (device, number)
        return number
    }

    mutating func bookIndex(_ symbol: Symbol) -> Int {
        if let index = cached(symbol) { return index }
        let index = engine.bookIndex(for: symbol)
        remember(symbol, index)
        return index
    }

    mutating func existingBookIndex(_ symbol: Symbol) -> Int? {
        if let index = cached(symbol) { return index }
        guard let index = engine.bookIndexes[symbol] else { return nil }
        remember(symbol, index)
        return index
    }

    private func cached(_ symbol: Symbol) -> Int? {
        for entry in recentSymbols where entry.symbol == symbol { return entry.index }
        return nil
    }

    private mutating func remember(_ symbol: Symbol, _ index: Int) {
        if recentSymbols.count < 16 { recentSymbols.append((symbol, index)) }
    }
}
