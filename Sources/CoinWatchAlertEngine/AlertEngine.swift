public import CoinWatchModel

/// Decides, tick by tick, which devices' price alerts fire.
///
/// ## Crossing semantics
///
/// Every device has, per symbol, an ``AlertRule`` with an optional `above A` and `below B` side
/// (zero or absent = off). Alerts are **edge-triggered**: a side fires when the price *moves* to or
/// through its threshold, never because it *is* past it.
///
/// Each side is either **armed** or **disarmed** (or waiting for the symbol's first price):
///
/// | side      | armed means                   | an armed side fires at | a disarmed side re-arms at    |
/// |-----------|-------------------------------|------------------------|-------------------------------|
/// | `above A` | last price strictly below `A` | `p ≥ A`                | `p < A` and `p ≤ A × (1 − h)` |
/// | `below B` | last price strictly above `B` | `p ≤ B`                | `p > B` and `p ≥ B × (1 + h)` |
///
/// where `p` is the tick's price.
///
/// `h` is the hysteresis band (``Configuration/hysteresis``, 0.5 % by default). Comparisons are exact:
/// `A × (1 − h)` is never rounded in a way that moves the boundary across any possible price.
///
/// - **Firing** disarms the side and produces a ``FiredAlert``.
/// - **Re-arming** takes a new **generation**, the engine's ``clock`` at that moment. A fired alert
///   carries the generation of the arming it consumed, so the idempotency key
///   (device, symbol, direction, threshold, generation) is the same for every re-delivery of one
///   crossing and different for every later crossing.
/// - **Equality** with the threshold counts as reaching it: a tick exactly at `A` fires an armed
///   `above A`. A following tick at exactly `A` again does not fire: the side is disarmed, and
///   re-arming needs a price strictly below `A` (and at or below `A × (1 − h)`). A price exactly at
///   `A × (1 − h)` re-arms.
/// - **The first price** ever seen for a symbol fires nothing; it only decides each side's state:
///   armed if strictly on the near side, disarmed otherwise (a price exactly at the threshold
///   counts as past it).
/// - **Saving a rule** (a new side, or a side whose threshold changed — a changed threshold is a new
///   rule) computes that side's state fresh against the last price, by the same rule as the first
///   price: a rule saved while the price is at or past its threshold starts disarmed and must re-arm
///   through the hysteresis band before it can fire. Saving an unchanged threshold keeps the side's
///   state. Changes and removals take effect from the next tick.
/// - **A jump** across several thresholds at once fires every armed side it reaches, and may fire one
///   side while re-arming the other side of the same rule.
/// - The two sides of a rule are independent, so odd rules (`below ≥ above`) are well defined.
///
/// ## Cost
///
/// Per symbol and direction the engine keeps the armed sides sorted by threshold and the disarmed
/// sides sorted by re-arm boundary (see `SortedChunkList`). A tick removes the run of armed sides its
/// price reached and the run of disarmed sides whose boundary it reached, and moves them to the other
/// index: O(log n + k) for k sides that change, never a scan of all rules. A settings change is
/// O(log n) plus one chunk shift; ``load(rules:armStates:lastPrices:clock:)`` rebuilds everything
/// in O(n log n).
///
/// ## Persistence
///
/// A restart must neither fire again nor lose an armed alert, so the service persists:
/// every ``ArmStateRecord`` the engine reports (from ``evaluate(symbol:price:into:)``,
/// ``setRule(device:symbol:rule:)`` and ``load(rules:armStates:lastPrices:clock:)``), each symbol's
/// last price, and ``clock`` whenever it persists a state change. ``snapshot()`` exports all of it.
///
/// ## Threads
///
/// Not thread-safe and deliberately not `Sendable`: one thread (or actor) owns an engine and makes
/// every call on it. Confining it avoids a lock on the per-tick path.
public final class AlertEngine {
    public let configuration: Configuration
    /// Advances by one on every accepted tick and every `setRule`; arming takes its value as the
    /// side's generation, so generations only grow.
    public internal(set) var clock: UInt64 = 0

    /// Device ids by device number; `nil` marks a free number.
    var devices: [DeviceID?] = []
    var deviceNumbers: [DeviceID: UInt32] = [:]
    /// How many rule sides (over all symbols) each device number has; at zero the number is freed.
    var sideCounts: [UInt32] = []
    var freeNumbers: [UInt32] = []
    /// One book per symbol ever seen (a handful), found through `bookIndexes`.
    var books: [SymbolBook] = []
    var bookIndexes: [Symbol: Int] = [:]
    /// Where the book the last tick went to was: a feed sends runs of one symbol, and comparing the book's symbol
    /// (the same `String`) is a pointer's comparison, where the dictionary hashes the text every tick. Checked
    /// against the book it names, so a rebuilt list of books (a bulk load) cannot mislead it.
    private var lastBookIndex = 0

    public init(configuration: Configuration = .standard) {
        self.configuration = configuration
    }

    /// Devices with at least one rule side.
    public var deviceCount: Int { deviceNumbers.count }

    /// Rule sides that are on, over all devices and symbols.
    public var activeSideCount: Int {
        books.reduce(0) { $0 + $1.above.activeCount + $1.below.activeCount }
    }

    /// The price the next tick of `symbol` will be compared against.
    public func lastPrice(for symbol: Symbol) -> ExactDecimal? {
        existingBook(symbol)?.lastPrice
    }

    /// The rule the engine holds for a device and symbol, with off sides as `nil`.
    public func rule(device: DeviceID, symbol: Symbol) -> AlertRule? {
        guard let number = deviceNumbers[device], let book = existingBook(symbol) else { return nil }
        let rule = AlertRule(
            below: book.below.slot(number)?.threshold, above: book.above.slot(number)?.threshold
        )
        return rule.isOff ? nil : rule
    }

    /// One side's current state, or `nil` when that side is off.
    public func armState(device: DeviceID, symbol: Symbol, direction: AlertDirection) -> ArmStateRecord? {
        guard let number = deviceNumbers[device], let book = existingBook(symbol) else { return nil }
        let side = book.side(direction)
        guard side.slot(number) != nil else { return nil }
        return side.record(Int(number), device: device, symbol: symbol)
    }

    /// Every side of the device that is on, with its state: what a store keeping one record per device persists
    /// whenever any of them changed. Empty when the device has no rule.
    public func armStates(device: DeviceID) -> [ArmStateRecord] {
        guard let number = deviceNumbers[device] else { return [] }
        var records: [ArmStateRecord] = []
        for book in books {
            for direction in AlertDirection.allCases {
                let side = book.side(direction)
                if side.slot(number) != nil {
                    records.append(side.record(Int(number), device: device, symbol: book.symbol))
                }
            }
        }
        return records
    }

    func existingBook(_ symbol: Symbol) -> SymbolBook? {
        bookIndexes[symbol].map { books[$0] }
    }

    func bookIndex(for symbol: Symbol) -> Int {
        if lastBookIndex < books.count, books[lastBookIndex].symbol == symbol { return lastBookIndex }
        if let index = bookIndexes[symbol] {
            lastBookIndex = index
            return index
        }
        books.append(SymbolBook(symbol: symbol, configuration: configuration))
        bookIndexes[symbol] = books.count - 1
        return books.count - 1
    }

    func book(for symbol: Symbol) -> SymbolBook {
        books[bookIndex(for: symbol)]
    }

    /// The device's number, allocating one (reusing a freed number first) when it has none.
    func number(for device: DeviceID) -> UInt32 {
        if let number = deviceNumbers[device] { return number }
        let number: UInt32
        if let reused = freeNumbers.popLast() {
            number = reused
            devices[Int(number)] = device
        } else {
            number = UInt32(devices.count)
            devices.append(device)
            sideCounts.append(0)
        }
        deviceNumbers[device] = number
        return number
    }

    /// The device's number when it is most likely new (a load meeting the next device): one hash
    /// table probe instead of a lookup followed by an insert.
    func newNumber(for device: DeviceID) -> UInt32 {
        guard freeNumbers.isEmpty else { return number(for: device) }
        let candidate = UInt32(devices.count)
        if let existing = deviceNumbers.updateValue(candidate, forKey: device) {
            deviceNumbers[device] = existing
            return existing
        }
        devices.append(device)
        sideCounts.append(0)
        return candidate
    }

    /// Frees the device's number once it has no rule side left.
    func releaseIfUnused(_ number: UInt32) {
        let index = Int(number)
        guard sideCounts[index] == 0, let device = devices[index] else { return }
        devices[index] = nil
        deviceNumbers[device] = nil
        freeNumbers.append(number)
    }
}

/// An engine is owned by one thread; sharing it would race on every index.
@available(*, unavailable)
extension AlertEngine: Sendable {}
