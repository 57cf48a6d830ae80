import CoinWatchCore

/// The clocks a feed reads: monotonic time for ages, deadlines and backoff, the wall clock for time stamps.
/// Injected so tests of liveness, backoff and staleness move time themselves instead of waiting for it.
public protocol FeedClock: Sendable {
    /// Monotonic nanoseconds (only differences mean anything).
    func monotonicNanos() -> Int64
    /// Milliseconds since the Unix epoch.
    func wallMs() -> Int64
}

/// The system's clocks (`MonotonicClock`, `WallClock`).
public struct SystemFeedClock: FeedClock {
    public init() {}

    public func monotonicNanos() -> Int64 { MonotonicClock.nanoseconds() }

    public func wallMs() -> Int64 { WallClock.milliseconds() }
}
