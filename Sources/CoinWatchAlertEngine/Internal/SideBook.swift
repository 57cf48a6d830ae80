import CoinWatchModel

/// Where one rule side is in its life.
package enum SidePhase: UInt8, Sendable {
    case off, awaitingPrice, armed, disarmed
}

/// What a load did with one persisted state.
enum RestoreOutcome {
    case restored, discarded, duplicate
}

/// One device's rule side on one symbol.
///
/// Keys are in ``PriceUnits`` on the side's *oriented* axis: as-is for `above`, negated for `below`.
/// On that axis both directions read the same — fire when `price ≥ key`, re-arm when
/// `price ≤ reArmKey` — so one implementation serves both.
struct SideSlot {
    var key: Int128 = 0
    /// Valid while `disarmed` (computed on entering that phase: only a disarmed side needs it, and
    /// skipping the division for armed sides halves the work of a load).
    var reArmKey: Int128 = 0
    var threshold: ExactDecimal = .zero
    var generation: UInt64 = 0
    var phase: SidePhase = .off
    /// Set while a load applies persisted states, to catch a state given twice.
    var restored = false

    var state: ArmState {
        switch phase {
        case .off, .awaitingPrice: .awaitingPrice
        case .armed: .armed(generation: generation)
        case .disarmed: .disarmed
        }
    }
}

/// All rule sides of one direction on one symbol, with the two indexes a tick walks.
///
/// Invariants (on the oriented axis, `p` the last price):
/// - an `armed` side sits in `armed` under its threshold key; a tick to `p` fires exactly the prefix
///   with key ≤ `p`;
/// - a `disarmed` side sits in `disarmed` under its re-arm key; a tick to `p` re-arms exactly the
///   suffix with key ≥ `p`;
/// - `awaitingPrice` sides are in neither (they exist only while the symbol has no price).
///
/// A tick therefore touches O(log n + k) entries for k sides that change, never the whole book.
struct SideBook {
    let direction: AlertDirection
    /// `1 − h` for `above`, `1 + h` for `below` (applied to the negated threshold).
    let factor: UnitFactor
    /// Indexed by device number; devices past the end have no rule here.
    var slots: [SideSlot] = []
    var armed: SortedChunkList
    var disarmed: SortedChunkList
    private(set) var activeCount = 0
    private var firedScratch: [IndexEntry] = []
    private var reArmedScratch: [IndexEntry] = []

    init(direction: AlertDirection, factor: UnitFactor, chunkSize: Int) {
        self.direction = direction
        self.factor = factor
        self.armed = SortedChunkList(chunkSize: chunkSize)
        self.disarmed = SortedChunkList(chunkSize: chunkSize)
    }

    @inline(__always)
    func oriented(_ units: Int128) -> Int128 { direction == .above ? units : -units }

    /// The largest oriented price that re-arms a side with oriented threshold `key`: beyond the
    /// hysteresis boundary *and* strictly before the threshold, so that with `h = 0`, or a boundary
    /// that rounds onto the threshold, a price sitting exactly on the threshold never re-arms.
    func reArmKey(forKey key: Int128) -> Int128 {
        min(key - 1, factor.floorProduct(key))
    }

    func slot(_ device: UInt32) -> SideSlot? {
        let index = Int(device)
        guard index < slots.count, slots[index].phase != .off else { return nil }
        return slots[index]
    }

    mutating func ensureSlots(_ count: Int) {
        if slots.count < count {
            slots.append(contentsOf: repeatElement(SideSlot(), count: count - slots.count))
        }
    }

    /// Turns the side off; `false` when it was already off.
    mutating func clear(_ device: UInt32) -> Bool {
        let index = Int(device)
        guard index < slots.count else { return false }
        let slot = slots[index]
        switch slot.phase {
        case .off:
            return false
        case .awaitingPrice:
            break
        case .armed:
            armed.remove(IndexEntry(key: slot.key, device: device))
        case .disarmed:
            disarmed.remove(IndexEntry(key: slot.reArmKey, device: device))
        }
        slots[index] = SideSlot()
        activeCount -= 1
        return true
    }

    /// Gives the side a threshold. An unchanged threshold keeps its state (`nil` is returned); a new
    /// one starts fresh against `price` (oriented units, `nil` when the symbol has no price yet).
    mutating func set(
        _ device: UInt32, threshold: ExactDecimal, price: Int128?, clock: UInt64
    ) -> ArmState? {
        ensureSlots(Int(device) + 1)
        if let current = slot(device), current.threshold == threshold { return nil }
        _ = clear(device)
        let key = oriented(PriceUnits.units(threshold))
        var slot = SideSlot(key: key, threshold: threshold, phase: .awaitingPrice)
        if let price {
            placeFresh(&slot, device: device, price: price, clock: clock)
        }
        slots[Int(device)] = slot
        activeCount += 1
        return slot.state
    }

    /// A new side against a known price: armed only when the price is strictly on the near side.
    /// At or past the threshold it starts disarmed, so saving a rule never fires it.
    private mutating func placeFresh(_ slot: inout SideSlot, device: UInt32, price: Int128, clock: UInt64) {
        if price < slot.key {
            slot.phase = .armed
            slot.generation = clock
            armed.insert(IndexEntry(key: slot.key, device: device))
        } else {
            slot.phase = .disarmed
            slot.reArmKey = reArmKey(forKey: slot.key)
            disarmed.insert(IndexEntry(key: slot.reArmKey, device: device))
        }
    }

    /// Whether any side still waits for a price.
    var hasWaiting: Bool { slots.contains { $0.phase == .awaitingPrice } }

    /// Gives every waiting side its fresh state against `price` and reports it; nothing fires. Used
    /// for a symbol's first price and, at load, for sides whose persisted state is missing or stale.
    /// The caller rebuilds the indexes afterwards.
    mutating func placeWaiting(
        _ price: Int128, clock: UInt64, devices: [DeviceID?], symbol: Symbol, into changes: inout [ArmStateRecord]
    ) {
        for index in slots.indices where slots[index].phase == .awaitingPrice {
            if price < slots[index].key {
                slots[index].phase = .armed
                slots[index].generation = clock
            } else {
                slots[index].phase = .disarmed
                slots[index].reArmKey = reArmKey(forKey: slots[index].key)
            }
            if let device = devices[index] {
                changes.append(record(index, device: device, symbol: symbol))
            }
        }
    }

    /// Applies a persisted state during a load. The state must be for the side's current threshold
    /// and agree with the prices: a symbol with a price has no waiting sides, one without has only.
    mutating func restore(
        _ device: UInt32, threshold: ExactDecimal, state: ArmState, hasPrice: Bool
    ) -> RestoreOutcome {
        let index = Int(device)
        guard index < slots.count, slots[index].phase != .off, slots[index].threshold == threshold else {
            return .discarded
        }
        guard !slots[index].restored else { return .duplicate }
        switch (state, hasPrice) {
        case (.awaitingPrice, false):
            break
        case (.armed(let generation), true):
            slots[index].phase = .armed
            slots[index].generation = generation
        case (.disarmed, true):
            slots[index].phase = .disarmed
            slots[index].reArmKey = reArmKey(forKey: slots[index].key)
        default:
            return .discarded
        }
        slots[index].restored = true
        return .restored
    }

    /// Rebuilds both indexes and the active count from the slots, after a load or a first price, and
    /// clears the load's `restored` marks. Linear passes plus a radix sort: O(n) for a few digits.
    mutating func rebuildIndexes() {
        var armedCount = 0
        var disarmedCount = 0
        var active = 0
        for index in slots.indices {
            switch slots[index].phase {
            case .armed: armedCount += 1
            case .disarmed: disarmedCount += 1
            case .off: continue
            case .awaitingPrice: break
            }
            active += 1
            slots[index].restored = false
        }
        activeCount = active
        var armedEntries: [IndexEntry] = []
        var disarmedEntries: [IndexEntry] = []
        armedEntries.reserveCapacity(armedCount)
        disarmedEntries.reserveCapacity(disarmedCount)
        for index in slots.indices {
            let slot = slots[index]
            switch slot.phase {
            case .armed: armedEntries.append(IndexEntry(key: slot.key, device: UInt32(index)))
            case .disarmed: disarmedEntries.append(IndexEntry(key: slot.reArmKey, device: UInt32(index)))
            case .off, .awaitingPrice: break
            }
        }
        // Gathered in device order, which radix sorting keeps for equal keys.
        IndexEntry.radixSortByKey(&armedEntries)
        IndexEntry.radixSortByKey(&disarmedEntries)
        armed = SortedChunkList(sorted: armedEntries, chunkSize: armed.chunkSize)
        disarmed = SortedChunkList(sorted: disarmedEntries, chunkSize: disarmed.chunkSize)
    }

    /// One tick on the oriented axis: fire the armed prefix at or below `price`, re-arm the disarmed
    /// suffix at or above it. Nothing moved can move again in the same tick: a fired side's re-arm key
    /// is strictly below its threshold, which is ≤ `price`; a re-armed side's threshold is strictly
    /// above its re-arm key, which is ≥ `price`. With `fire` false the prefix is disarmed the same way
    /// but reported as suppressed instead of as alerts.
    mutating func tick(
        _ price: Int128,
        decimalPrice: ExactDecimal,
        clock: UInt64,
        devices: [DeviceID?],
        symbol: Symbol,
        fire: Bool = true,
        into result: inout EvaluationResult
    ) {
        // Most ticks move nothing: the scratch lists are then left alone, since emptying, sorting or inserting an
        // empty array that never had storage makes a new one every time.
        if !firedScratch.isEmpty { firedScratch.removeAll(keepingCapacity: true) }
        if !reArmedScratch.isEmpty { reArmedScratch.removeAll(keepingCapacity: true) }
        armed.popPrefix(through: price, into: &firedScratch)
        disarmed.popSuffix(from: price, into: &reArmedScratch)

        for position in firedScratch.indices {
            let index = Int(firedScratch[position].device)
            slots[index].phase = .disarmed
            slots[index].reArmKey = reArmKey(forKey: slots[index].key)
            firedScratch[position].key = slots[index].reArmKey
            if let device = devices[index] {
                let slot = slots[index]
                guard fire else {
                    result.suppressed += 1
                    result.armStateChanges.append(record(index, device: device, symbol: symbol))
                    continue
                }
                result.alerts.append(
                    FiredAlert(
                        device: device, symbol: symbol, direction: direction, threshold: slot.threshold,
                        price: decimalPrice, generation: slot.generation
                    )
                )
                result.armStateChanges.append(record(index, device: device, symbol: symbol))
            }
        }
        for position in reArmedScratch.indices {
            let index = Int(reArmedScratch[position].device)
            slots[index].phase = .armed
            slots[index].generation = clock
            reArmedScratch[position].key = slots[index].key
            if let device = devices[index] {
                result.armStateChanges.append(record(index, device: device, symbol: symbol))
            }
        }
        // Re-keying keeps the order up to ties (both keys grow with the threshold), so these sorts
        // run over nearly sorted input.
        if firedScratch.count > 1 { firedScratch.sort() }
        if reArmedScratch.count > 1 { reArmedScratch.sort() }
        disarmed.insert(contentsOfSorted: firedScratch)
        armed.insert(contentsOfSorted: reArmedScratch)
    }

    func record(_ index: Int, device: DeviceID, symbol: Symbol) -> ArmStateRecord {
        let slot = slots[index]
        return ArmStateRecord(
            device: device, symbol: symbol, direction: direction, threshold: slot.threshold, state: slot.state
        )
    }
}
