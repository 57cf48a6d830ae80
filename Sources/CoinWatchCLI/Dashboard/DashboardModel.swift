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

        var change: PriceChange { PriceChange(from: first, to: last) }
    }

    /// The most prices kept per symbol (wider than any sparkline drawn).
    static let historyLimit = 240

    let server: String
    let started: ContinuousClock.Instant
    private(set) var rows: [String: Row] = [:]
    var connection = StreamState.connecting
    /// Sequence numbers skipped by the server's stream (or dropped by a slow reader), summed over streams.
    private(set) var gaps: UInt64 = 0
    /// Streams opened; more than one means the watch reconnected.
    private(set) var streams = 0
    private var lastSequence: UInt64?
    /// Updates whose price could not be read (an impossible decimal scale).
    private(set) var invalid: UInt64 = 0

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

    /// Applies one update that arrived at `now`.
    mutating func apply(_ update: V1.PriceUpdate, at now: ContinuousClock.Instant) {
        if let lastSequence, update.sequence > lastSequence + 1 {
            gaps += update.sequence - lastSequence - 1
        }
        lastSequence = update.sequence
        guard let wire = update.price, let price = ExactDecimal(wire) else {
            invalid += 1
            return
        }
        let second = Int((now - started).components.seconds)
        if var row = rows[update.symbol] {
            row.last = price
            row.history.append(price)
            if row.history.count > Self.historyLimit { row.history.removeFirst(row.history.count - Self.historyLimit) }
            row.lastArrival = now
            row.sourceTimeMs = update.sourceTimeMs
            row.rate.record(second: second)
            row.updates += 1
            rows[update.symbol] = row
        } else {
            var row = Row(
                symbol: update.symbol, first: price, last: price, history: [price], lastArrival: now,
                sourceTimeMs: update.sourceTimeMs)
            row.rate.record(second: second)
            row.updates = 1
            rows[update.symbol] = row
        }
    }
}
