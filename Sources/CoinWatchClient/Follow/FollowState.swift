public import CoinWatchRPC

/// Where a followed stream stands.
public enum FollowState: Sendable, Hashable {
    /// Connecting to a server (the first time, or again after a pause).
    case connecting
    /// A new stream is open on `server` (`HOST:PORT`); `stream` counts the streams opened, 1 for the first.
    case connected(server: String, stream: Int)
    /// The connection or stream was lost for `reason`; the next attempt starts at `retryAt` (a `ContinuousClock`
    /// instant). `attempt` counts the pauses since the last stream that delivered an element, 1 for the first.
    case waiting(retryAt: ContinuousClock.Instant, attempt: Int, reason: RPCError)
    /// Ended for good: nil when cancelled, else the error that cannot be retried. Nothing follows it.
    case ended(RPCError?)
}
