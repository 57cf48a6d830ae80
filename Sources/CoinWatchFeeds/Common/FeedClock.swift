import CoinWatchService

/// The clocks a feed reads: monotonic time for ages, deadlines and backoff, the wall clock for time stamps.
/// Injected so tests of liveness, backoff and staleness move time themselves instead of waiting for it.
public protocol FeedClock: Sendable {
    /// Monotonic nanoseconds (only differences mean anything).
    func monotonicNanos() -> Int64
    /// Milliseconds since the Unix epoch.
    func wallMs() -> Int64
}

/// The system's clocks (`PriceClock`).
public struct SystemFeedClock: FeedClock {
    public init() {}

    public func monotonicNanos() -> Int64 { PriceClock.monotonicNanos() }

    public func wallMs() -> Int64 { PriceClock.nowMs() }
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? .max
            : scaled + attoseconds / 1_000_000_000
    }
}
