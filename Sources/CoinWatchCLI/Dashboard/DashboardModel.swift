import CoinWatchClient
import CoinWatchModel
import CoinWatchProto

/// Everything the dashboard shows, updated from the stream and read by the renderer.
///
/// A plain value owned by the UI thread; time is passed in (`ContinuousClock` instants) so rendering
/// a given state at a given moment is repeatable in tests.
struct DashboardModel: Sendable {
    /// One symbol's row.
    struct Row: Sendable {
        let symbol: String
        /// The first price seen: the reference for "change since the watch started".
        let first: ExactDecimal
        fileprivate(set) var last: ExactDecimal
        /// Recent prices, oldest first, at most `historyLimit`.
        fileprivate(set) var history: [ExactDecimal]
        fileprivate(set) var lastArrival: ContinuousClock.Instant
        fileprivate(set) var sourceTimeMs: Int64
        fileprivate(set) var rate = RateMeter()
        fileprivate(set) var updates: UInt64 = 0
        /// The server marked the symbol stale (no fresh source); the next price clears it.
        fileprivate(set) var isStale = false
        /// How many sources the last price was the median of (0: not reported).
        fileprivate(set) var sources: UInt32 = 0

        var change: PriceChange { PriceChange(from: first, to: last) }
    }

    /// The widest text each value column has needed so far. Columns only grow, so they stay where they are from one
    /// frame to the next while values change width (a change going from +9.5 to +10.25 and back).
    struct ColumnWidths: Sendable, Hashable {
        var priceInteger = 0
        var priceFraction = 0
        var changeInteger = 0
        var changeFraction = 0
        var percent = 0

        mutating func include(_ row: Row) {
            let price = TextTable.decimalParts(row.last.description)
            priceInteger = max(priceInteger, price.integer.count)
            priceFraction = max(priceFraction, price.fraction.count)
            let change = row.change
            let difference = TextTable.decimalParts(change.differenceText)
            changeInteger = max(changeInteger, difference.integer.count)
            changeFraction = max(changeFraction, difference.fraction.count)
            percent = max(percent, change.percentText.count)
        }
    }

    /// The most prices kept per symbol (wider than any sparkline drawn).
    static let historyLimit = 240

    let server: String
    let started: ContinuousClock.Instant
    private(set) var rows: [String: Row] = [:]
    var connection = FollowState.connecting
    /// Sequence numbers skipped by the server's stream (or dropped by a slow reader), summed over streams.
    private(set) var gaps: UInt64 = 0
    /// Streams opened; more than one means the watch reconnected.
    private(set) var streams = 0
    private var lastSequence: UInt64?
    /// Updates whose price could not be read (an impossible decimal scale).
    private(set) var invalid: UInt64 = 0
    private(set) var widths = ColumnWidths()

    init(server: String, started: ContinuousClock.Instant) {
        self.server = server
        self.started = started
    }

    /// Rows ordered by symbol.
    var orderedRows: [Row] { rows.keys.sorted().map { rows[$0]! } }

    /// A new stream started: sequence numbers start again at 1.
    mutating func streamOpened() {
        streams += 1
        lastSequence = nil
    }

    /// Applies one update that arrived at `now`, when the wall clock read `wallClockMs`.
    ///
    /// A snapshot message (a stream's start, and every reconnect) repeats a price the server already had: it is
    /// not a tick, so it neither counts towards ticks per second nor adds the same price to the sparkline again,
    /// and its age is its `source_time_ms`'s, not its arrival's.
    mutating func apply(_ update: V1.PriceUpdate, at now: ContinuousClock.Instant, wallClockMs: Int64) {
        if let lastSequence, update.sequence > lastSequence + 1 {
            gaps += update.sequence - lastSequence - 1
        }
        lastSequence = update.sequence
        guard let wire = update.price, let price = ExactDecimal(wire) else {
            invalid += 1
            return
        }
        let second = Int((now - started).components.seconds)
        // A stale mark repeats the last price: it changes the row's state, not its history or rate.
        if update.stale {
            if var row = rows[update.symbol] {
                row.isStale = true
                rows[update.symbol] = row
            } else {
                var row = Row(
                    symbol: update.symbol, first: price, last: price, history: [price], lastArrival: now,
                    sourceTimeMs: update.sourceTimeMs)
                row.isStale = true
                rows[update.symbol] = row
            }
            return
        }
        // When the snapshot's price was set, on this process's monotonic clock (a source time ahead of the
        // wall clock, as a venue's clock may be, reads as now).
        let arrival = update.snapshot && update.sourceTimeMs > 0
            ? now - .milliseconds(max(0, wallClockMs - update.sourceTimeMs)) : now
        if var row = rows[update.symbol] {
            row.isStale = false
            row.sources = update.sources
            if !update.snapshot || price != row.last {
                row.history.append(price)
                if row.history.count > Self.historyLimit {
                    row.history.removeFirst(row.history.count - Self.historyLimit)
                }
            }
            row.last = price
            row.lastArrival = arrival
            row.sourceTimeMs = update.sourceTimeMs
            if !update.snapshot {
                row.rate.record(second: second)
                row.updates += 1
            }
            widths.include(row)
            rows[update.symbol] = row
        } else {
            var row = Row(
                symbol: update.symbol, first: price, last: price, history: [price], lastArrival: arrival,
                sourceTimeMs: update.sourceTimeMs)
            if !update.snapshot {
                row.rate.record(second: second)
                row.updates = 1
            }
            row.sources = update.sources
            widths.include(row)
            rows[update.symbol] = row
        }
    }
}
