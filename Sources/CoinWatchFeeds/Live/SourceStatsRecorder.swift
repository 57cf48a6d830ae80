import CoinWatchModel
public import CoinWatchService
import Synchronization

/// The live counters of one price source: written by the source's own thread (a few times per read, not per
/// message), read by health checks and metrics from any thread.
public final class SourceStatsRecorder: Sendable {
    private struct State {
        var stats: PriceSourceStats
        var lastMessageNanos: Int64?
        var rate = RateWindow()
    }

    private let state: Mutex<State>
    let clock: any FeedClock

    public init(name: String, clock: any FeedClock) {
        state = Mutex(State(stats: PriceSourceStats(name: name)))
        self.clock = clock
    }

    /// Counts `messages` arrived now, of which `prices` prices were taken.
    func received(messages: Int, prices: Int = 0) {
        guard messages > 0 || prices > 0 else { return }
        let now = clock.monotonicNanos()
        state.withLock { state in
            state.stats.messages &+= UInt64(messages)
            state.stats.prices &+= UInt64(prices)
            state.lastMessageNanos = now
            state.rate.add(messages, at: now)
        }
    }

    /// Notes activity that is not a message (a pong) for the last-message age.
    func touched() {
        let now = clock.monotonicNanos()
        state.withLock { $0.lastMessageNanos = now }
    }

    func update(_ body: (inout PriceSourceStats) -> Void) {
        state.withLock { body(&$0.stats) }
    }

    /// The counters now, with the age of the last message and the recent rate.
    public var snapshot: PriceSourceStats {
        let now = clock.monotonicNanos()
        return state.withLock { state in
            var stats = state.stats
            stats.lastMessageAgeMs = state.lastMessageNanos.map { max(0, (now - $0) / 1_000_000) }
            stats.messagesPerSecond = state.rate.perSecond(at: now)
            return stats
        }
    }
}

/// Messages per second over the last ten whole seconds, in one-second buckets.
struct RateWindow {
    static let seconds = 10
    private var buckets = [UInt64](repeating: 0, count: RateWindow.seconds)
    /// The second (monotonic) each bucket holds.
    private var bucketSecond = [Int64](repeating: .min, count: RateWindow.seconds)

    mutating func add(_ count: Int, at nanos: Int64) {
        let second = nanos / 1_000_000_000
        let index = Int(second.magnitude % UInt64(Self.seconds))
        if bucketSecond[index] != second {
            bucketSecond[index] = second
            buckets[index] = 0
        }
        buckets[index] &+= UInt64(count)
    }

    /// The count over the ten seconds before the current one, divided by ten (one decimal, exact).
    func perSecond(at nanos: Int64) -> ExactDecimal {
        let current = nanos / 1_000_000_000
        var total: UInt64 = 0
        for index in 0..<Self.seconds where bucketSecond[index] < current && bucketSecond[index] >= current - Int64(Self.seconds) {
            total &+= buckets[index]
        }
        return ExactDecimal(mantissa: Int64(min(total, UInt64(Int64.max))), scale: 1) ?? .zero
    }
}
