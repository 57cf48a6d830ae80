import CoinWatchCore
public import CoinWatchModel
public import CoinWatchService
import Synchronization

/// A random-walk market for demos, development and benchmarks: the `sim` feed.
///
/// Publishes one batch (one tick per instrument) `ticksPerSecond` times a second from its own thread, on an
/// absolute schedule so the rate does not drift. Prices repeat exactly for a seed; time stamps are the wall clock.
public final class SimulatedFeed: PriceFeed {
    public struct Configuration: Sendable, Hashable {
        public var seed: UInt64 = 1
        /// Batches per second; each batch carries one tick per instrument.
        public var ticksPerSecond: Double = 10
        public var instruments: [SimulatedInstrument] = SimulatedInstrument.defaults

        public init(seed: UInt64 = 1, ticksPerSecond: Double = 10) {
            self.seed = seed
            self.ticksPerSecond = ticksPerSecond
        }
    }

    /// The highest rate accepted: beyond it, sleeping per batch costs more than the batch.
    public static let maxTicksPerSecond = 100_000.0

    public let configuration: Configuration
    public let symbols: [Symbol]
    private let sink: any PriceSink
    private let market: SimulatedMarket
    private let thread = FeedThread(name: "cw-feed-sim")
    private let published = Atomic<Int>(0)
    /// One message per batch.
    public let stats: SourceStatsRecorder

    /// - Parameter sink: the hub, or the aggregator's input for this source.
    public init(
        publishingTo sink: any PriceSink, configuration: Configuration = Configuration(),
        clock: any FeedClock = SystemFeedClock()
    ) throws(FeedError) {
        guard configuration.ticksPerSecond > 0, configuration.ticksPerSecond <= Self.maxTicksPerSecond else {
            throw FeedError(
                code: .invalidSpec,
                message: "sim: ticks per second must be greater than 0 and at most \(Int(Self.maxTicksPerSecond)) "
                    + "(got \(configuration.ticksPerSecond))")
        }
        self.sink = sink
        self.configuration = configuration
        stats = SourceStatsRecorder(name: "sim", clock: clock)
        market = try SimulatedMarket(seed: configuration.seed, instruments: configuration.instruments)
        symbols = market.symbols
    }

    public var name: String {
        "sim seed \(configuration.seed), \(configuration.ticksPerSecond) ticks/s per symbol"
    }

    /// Ticks published so far.
    public var publishedTicks: Int { published.load(ordering: .relaxed) }

    public var sourceStats: [PriceSourceStats] { [stats.snapshot] }

    public func start() {
        stats.update { $0.isConnected = true }
        let period = Int64(1e9 / configuration.ticksPerSecond)
        let initial = self.market
        thread.start { [self] thread in
            // The walk's state belongs to this thread alone.
            var market = initial
            var next = MonotonicClock.nanoseconds()
            while thread.sleep(untilMonotonicNanos: next) {
                let ticks = market.step(timeMs: WallClock.milliseconds())
                let taken = sink.publish(ticks)
                published.add(taken, ordering: .relaxed)
                stats.received(messages: 1, prices: taken)
                next += period
                // After a stall (a suspended process, an overloaded machine) resume the rate instead of bursting.
                let now = MonotonicClock.nanoseconds()
                if next < now - 10 * period { next = now }
            }
        }
    }

    public func stop() {
        thread.stop()
        stats.update { $0.isConnected = false }
    }
}
