import CoinWatchCore
public import CoinWatchModel
public import CoinWatchService
import Synchronization

/// One price per symbol from several sources: the median of the sources' latest prices that are younger than
/// `maxAge`, published with the number of sources it was taken from. A symbol whose every price aged out is marked
/// stale in the hub (once); its next price makes it fresh again.
///
/// Ages are measured from when each price *arrived* (the monotonic clock), not from the venue's time stamp, so a
/// venue with a skewed clock neither ages out early nor stays fresh forever. With an even number of fresh prices
/// the median is the mean of the middle two, exact unless it needs a 19th decimal (then rounded to nearest, ties to
/// even). The published time is the newest of the contributing prices' times.
///
/// Sources call `input(_:)`'s `publish` from their own threads; `sweep` runs on a timer (the feeds' event loop) and
/// says when it next needs to run. All state is behind one lock, and publishing happens under it, so the hub sees
/// each symbol's prices in the order they were decided.
public final class PriceAggregator: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// A price older than this no longer counts; default 10 s.
        public var maxAge: Duration = .seconds(10)

        public init(maxAge: Duration = .seconds(10)) {
            self.maxAge = maxAge
        }
    }

    struct Quote {
        var price: ExactDecimal
        var timeMs: Int64
        var arrivedNanos: Int64
    }

    struct SymbolState {
        /// By source index.
        var quotes: [Quote?]
        /// When the freshest-to-expire quote ages out (or, for a symbol known only from the store, when it turns
        /// stale without a quote); `Int64.max` when nothing is due.
        var dueNanos: Int64
        var isStale = false
        /// The last published median and source count, to republish only changes on expiry.
        var published: (ExactDecimal, UInt32)?
    }

    struct State {
        var sourceNames: [String] = []
        var symbols: [Symbol: SymbolState] = [:]
    }

    public let configuration: Configuration
    let sink: any PriceSink
    let hub: PriceHub?
    let clock: any FeedClock
    private let maxAgeNanos: Int64
    private let state = Mutex(State())

    /// - Parameters:
    ///   - hub: where medians go; also where symbols are marked stale.
    ///   - knownSymbols: symbols that already have a price (restored from the store): stale after `maxAge` unless a
    ///     source quotes them by then.
    public convenience init(
        hub: PriceHub, configuration: Configuration = Configuration(), clock: any FeedClock = SystemFeedClock(),
        knownSymbols: [Symbol] = []
    ) {
        self.init(sink: hub, hub: hub, configuration: configuration, clock: clock, knownSymbols: knownSymbols)
    }

    init(
        sink: any PriceSink, hub: PriceHub?, configuration: Configuration, clock: any FeedClock,
        knownSymbols: [Symbol]
    ) {
        self.sink = sink
        self.hub = hub
        self.configuration = configuration
        self.clock = clock
        maxAgeNanos = max(1, configuration.maxAge.inNanoseconds)
        let due = clock.monotonicNanos() + maxAgeNanos
        state.withLock { state in
            for symbol in knownSymbols {
                state.symbols[symbol] = SymbolState(quotes: [], dueNanos: due)
            }
        }
    }

    /// A sink for one more source; its prices are combined with the others'.
    public func input(named name: String) -> Input {
        let index = state.withLock { state in
            state.sourceNames.append(name)
            return state.sourceNames.count - 1
        }
        return Input(aggregator: self, source: index)
    }

    /// One source's way in.
    public struct Input: PriceSink {
        let aggregator: PriceAggregator
        let source: Int

        @discardableResult
        public func publish(_ ticks: [PriceTick]) -> Int {
            aggregator.take(ticks, from: source)
        }
    }

    /// The source names in the order they were added.
    public var sourceNames: [String] { state.withLock { $0.sourceNames } }

    // MARK: Taking prices

    private func take(_ ticks: [PriceTick], from source: Int) -> Int {
        guard !ticks.isEmpty else { return 0 }
        let now = clock.monotonicNanos()
        let cutoff = now - maxAgeNanos
        return state.withLock { state -> Int in
            var out: [PriceTick] = []
            out.reserveCapacity(ticks.count)
            let sourceCount = state.sourceNames.count
            for tick in ticks where !tick.isStale {
                // Changed in place: taking the entry out and putting it back would copy its quotes every tick.
                let maxAge = maxAgeNanos
                let published = Self.update(
                    &state.symbols[tick.symbol, default: SymbolState(quotes: [], dueNanos: .max)], source: source,
                    sourceCount: sourceCount, quote: Quote(price: tick.price, timeMs: tick.timeMs, arrivedNanos: now),
                    cutoff: cutoff, maxAge: maxAge)
                if let (median, count, timeMs) = published {
                    out.append(PriceTick(symbol: tick.symbol, price: median, timeMs: timeMs, sources: count))
                }
            }
            guard !out.isEmpty else { return 0 }
            sink.publish(out)
            return ticks.count
        }
    }

    /// Records `quote` from `source` and returns the new median, its source count and time (nil: none fresh).
    private static func update(
        _ entry: inout SymbolState, source: Int, sourceCount: Int, quote: Quote, cutoff: Int64, maxAge: Int64
    ) -> (ExactDecimal, UInt32, Int64)? {
        if entry.quotes.count < sourceCount {
            entry.quotes.append(contentsOf: repeatElement(nil, count: sourceCount - entry.quotes.count))
        }
        entry.quotes[source] = quote
        guard let (median, count, timeMs, due) = median(entry.quotes, cutoff: cutoff, maxAge: maxAge) else { return nil }
        entry.dueNanos = due
        entry.isStale = false
        entry.published = (median, count)
        return (median, count, timeMs)
    }

    /// The median of the quotes that arrived after `cutoff`, their count, the newest time among them, and when
    /// the first of them ages out. Nil when none is fresh.
    static func median(
        _ quotes: [Quote?], cutoff: Int64, maxAge: Int64
    ) -> (ExactDecimal, UInt32, Int64, Int64)? {
        // The common case: one source.
        if quotes.count == 1 {
            guard let quote = quotes[0], quote.arrivedNanos > cutoff else { return nil }
            return (quote.price, 1, quote.timeMs, quote.arrivedNanos + maxAge)
        }
        var prices: [ExactDecimal] = []
        prices.reserveCapacity(quotes.count)
        var timeMs = Int64.min
        var due = Int64.max
        for case let quote? in quotes where quote.arrivedNanos > cutoff {
            prices.append(quote.price)
            timeMs = max(timeMs, quote.timeMs)
            due = min(due, quote.arrivedNanos + maxAge)
        }
        guard !prices.isEmpty else { return nil }
        prices.sort()
        let middle = prices.count / 2
        var median = prices[middle]
        if prices.count % 2 == 0 {
            let lower = prices[middle - 1]
            if let sum = try? lower.adding(median),
               let mean = try? sum.multiplied(by: ExactDecimal(mantissa: 5, scale: 1)!, rounding: .toNearestOrEven)
            {
                median = mean
            } else {
                median = lower
            }
        }
        return (median, UInt32(prices.count), timeMs, due)
    }

    // MARK: Ageing

    /// Re-takes the median of every symbol one of whose prices aged out (publishing it when it changed), and marks
    /// stale the symbols left without a fresh price.
    ///
    /// - Returns: the monotonic time the next sweep is due (`Int64.max` when nothing is waiting to age).
    @discardableResult
    public func sweep() -> Int64 {
        let now = clock.monotonicNanos()
        let cutoff = now - maxAgeNanos
        return state.withLock { state -> Int64 in
            var republished: [PriceTick] = []
            var stale: [Symbol] = []
            var next = Int64.max
            for (symbol, var entry) in state.symbols {
                guard !entry.isStale else { continue }
                if entry.dueNanos > now {
                    next = min(next, entry.dueNanos)
                    continue
                }
                if let (median, count, timeMs, due) = Self.median(entry.quotes, cutoff: cutoff, maxAge: maxAgeNanos) {
                    entry.dueNanos = due
                    next = min(next, due)
                    if entry.published.map({ $0.0 != median || $0.1 != count }) ?? true {
                        entry.published = (median, count)
                        republished.append(PriceTick(symbol: symbol, price: median, timeMs: timeMs, sources: count))
                    }
                } else {
                    entry.isStale = true
                    entry.dueNanos = .max
                    entry.published = nil
                    stale.append(symbol)
                }
                state.symbols[symbol] = entry
            }
            if !republished.isEmpty {
                sink.publish(republished.sorted { $0.symbol < $1.symbol })
            }
            if !stale.isEmpty {
                hub?.markStale(stale.sorted())
            }
            return next
        }
    }

    /// Symbols currently marked stale here, sorted.
    public var staleSymbols: [Symbol] {
        state.withLock { state in state.symbols.filter(\.value.isStale).map(\.key).sorted() }
    }
}
