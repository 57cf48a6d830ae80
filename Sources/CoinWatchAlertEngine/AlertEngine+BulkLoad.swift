public import CoinWatchModel
import Dispatch
import Synchronization

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

        // Number the devices and bucket the rules by symbol.
        var rulesByBook: [[(record: Int, device: UInt32)]] = []
        // Rules come grouped by device, so counting changes of device bounds the devices closely (a
        // table sized for every rule would be twice as large and miss the cache twice as often).
        var deviceRuns = 0
        for position in rules.indices where position == 0 || rules[position].device != rules[position - 1].device {
            deviceRuns += 1
        }
        fresh.deviceNumbers.reserveCapacity(deviceRuns)
        for position in rules.indices where !rules[position].rule.isOff {
            try Self.validate(rules[position].rule, device: rules[position].device, symbol: rules[position].symbol)
            let book = loader.bookIndex(rules[position].symbol)
            while rulesByBook.count <= book { rulesByBook.append([]) }
            rulesByBook[book].append((position, loader.number(rules[position].device, creating: true) ?? 0))
        }

        // Side counts per device, then everything per book — slots, persisted states, fresh states, indexes — on
        // as many threads as there are books and cores: books share nothing but the read-only inputs.
        for bucket in rulesByBook {
            for (position, device) in bucket {
                let rule = rules[position].rule
                fresh.sideCounts[Int(device)] += (rule.threshold(.above) == nil ? 0 : 1) + (rule.threshold(.below) == nil ? 0 : 1)
            }
        }
        var statesByBook: [[(record: Int, device: UInt32)]] = Array(repeating: [], count: fresh.books.count * 2)
        var report = AlertEngineLoadReport()
        for position in armStates.indices {
            guard let device = loader.number(armStates[position].device, creating: false),
                  let book = loader.existingBookIndex(armStates[position].symbol)
            else {
                report.discardedStates += 1
                continue
            }
            statesByBook[book * 2 + (armStates[position].direction == .above ? 0 : 1)].append((position, device))
        }
        while rulesByBook.count < fresh.books.count { rulesByBook.append([]) }

        let deviceCount = fresh.devices.count
        let work = BookWork(books: fresh.books)
        let ruleBuckets = rulesByBook
        let stateBuckets = statesByBook
        DispatchQueue.concurrentPerform(iterations: work.books.count) { bookPosition in
            var outcome = BookOutcome()
            outcome.fill(
                work.books[bookPosition], bucket: ruleBuckets[bookPosition], rules: rules, deviceCount: deviceCount
            )
            if outcome.duplicateRule == nil {
                outcome.restore(
                    work.books[bookPosition], above: stateBuckets[bookPosition * 2],
                    below: stateBuckets[bookPosition * 2 + 1], armStates: armStates
                )
            }
            work.outcomes.withLock { $0[bookPosition] = outcome }
        }
        let outcomes = work.outcomes.withLock { $0 }
        for (bookPosition, outcome) in outcomes.enumerated() {
            if let position = outcome.duplicateRule {
                throw AlertEngineError(
                    code: .duplicateRecord, message: "two rules for \(rules[position].device) \(fresh.books[bookPosition].symbol)"
                )
            }
        }
        var newestGeneration = clock
        for outcome in outcomes {
            if let position = outcome.duplicateState {
                let record = armStates[position]
                throw AlertEngineError(
                    code: .duplicateRecord,
                    message: "two arm states for \(record.device) \(record.symbol) \(record.direction)"
                )
            }
            report.rules += outcome.rules
            report.restoredStates += outcome.restored
            report.discardedStates += outcome.discarded
            newestGeneration = max(newestGeneration, outcome.newestGeneration)
        }

        // Sides with no usable state start fresh against the price, at a new clock tick.
        fresh.clock = newestGeneration
        let needsFreshStates = fresh.books.contains { book in
            book.lastPrice != nil && (book.above.hasWaiting || book.below.hasWaiting)
        }
        if needsFreshStates { fresh.clock += 1 }
        let freshClock = fresh.clock
        let deviceList = DeviceList(devices: fresh.devices)
        DispatchQueue.concurrentPerform(iterations: work.books.count) { bookPosition in
            let book = work.books[bookPosition]
            var freshStates: [ArmStateRecord] = []
            for direction in AlertDirection.allCases {
                book.withSide(direction) { side in
                    if let price = book.lastPrice {
                        side.placeWaiting(
                            side.oriented(PriceUnits.units(price)), clock: freshClock, devices: deviceList.devices,
                            symbol: book.symbol, into: &freshStates
                        )
                    }
                    side.rebuildIndexes()
                }
            }
            work.freshStates.withLock { $0[bookPosition] = freshStates }
        }
        for freshStates in work.freshStates.withLock({ $0 }) {
            report.freshStates.append(contentsOf: freshStates)
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

    /// Where a lookup expects the next device: persisted states usually come in the order the rules numbered
    /// their devices (both key-ordered by device), so a comparison or two replaces most hash lookups.
    private var cursor = 0

    mutating func number(_ device: DeviceID, creating: Bool) -> UInt32? {
        if let lastDevice, lastDevice.id == device { return lastDevice.number }
        let number: UInt32
        if creating {
            number = engine.newNumber(for: device)
        } else if let next = expected(device) {
            number = next
        } else {
            guard let known = engine.deviceNumbers[device] else { return nil }
            number = known
        }
        lastDevice = (device, number)
        cursor = Int(number) + 1
        return number
    }

    private func expected(_ device: DeviceID) -> UInt32? {
        let devices = engine.devices
        for candidate in cursor..<min(cursor + 2, devices.count) where devices[candidate] == device {
            return UInt32(candidate)
        }
        return nil
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

/// The books of an engine being loaded, shared by the threads of `load`, one book each.
///
/// `@unchecked Sendable`: during each parallel step every thread touches only `books[i]` for its own `i` (its slots and
/// indexes; a book shares no mutable state with another), the inputs it reads are not mutated while the step runs,
/// and `concurrentPerform` returns only after every thread finished. Results cross back through the mutexes.
private final class BookWork: @unchecked Sendable {
    let books: [SymbolBook]
    let outcomes: Mutex<[BookOutcome]>
    let freshStates: Mutex<[[ArmStateRecord]]>

    init(books: [SymbolBook]) {
        self.books = books
        outcomes = Mutex(Array(repeating: BookOutcome(), count: books.count))
        freshStates = Mutex(Array(repeating: [], count: books.count))
    }
}

/// The device list read by the fresh-state step (read-only while it runs); see `BookWork`.
private struct DeviceList: @unchecked Sendable {
    let devices: [DeviceID?]
}

/// What loading one book found.
private struct BookOutcome: Sendable {
    var rules = 0
    var restored = 0
    var discarded = 0
    var newestGeneration: UInt64 = 0
    /// The position of a rule record naming a device that already has a rule for this symbol.
    var duplicateRule: Int?
    /// The position of an arm state given twice for one side.
    var duplicateState: Int?

    /// Gives each side of the book its slots from the rules.
    mutating func fill(_ book: SymbolBook, bucket: [(record: Int, device: UInt32)], rules: [RuleRecord], deviceCount: Int) {
        var seen = [Bool](repeating: false, count: deviceCount)
        for (position, device) in bucket {
            guard !seen[Int(device)] else {
                duplicateRule = position
                return
            }
            seen[Int(device)] = true
        }
        self.rules = bucket.count
        for direction in AlertDirection.allCases {
            book.withSide(direction) { side in
                side.slots = [SideSlot](repeating: SideSlot(), count: deviceCount)
                for (position, device) in bucket {
                    guard let threshold = rules[position].rule.threshold(direction) else { continue }
                    let key = side.oriented(PriceUnits.units(threshold))
                    side.slots[Int(device)] = SideSlot(key: key, threshold: threshold, phase: .awaitingPrice)
                }
            }
        }
    }

    /// Applies the persisted states of both directions.
    mutating func restore(
        _ book: SymbolBook,
        above: [(record: Int, device: UInt32)],
        below: [(record: Int, device: UInt32)],
        armStates: [ArmStateRecord]
    ) {
        let hasPrice = book.lastPrice != nil
        for (direction, bucket) in [(AlertDirection.above, above), (.below, below)] where !bucket.isEmpty {
            let duplicate: Int? = book.withSide(direction) { side in
                for (position, device) in bucket {
                    let state = armStates[position].state
                    switch side.restore(device, threshold: armStates[position].threshold, state: state, hasPrice: hasPrice) {
                    case .restored:
                        restored += 1
                        if case .armed(let generation) = state {
                            newestGeneration = max(newestGeneration, generation)
                        }
                    case .discarded:
                        discarded += 1
                    case .duplicate:
                        return position
                    }
                }
                return nil
            }
            if let duplicate {
                duplicateState = duplicate
                return
            }
        }
    }
}
