public import CoinWatchRPC

/// How a followed stream retries.
public struct FollowOptions: Sendable {
    /// The pause before each new attempt.
    public var backoff = FollowBackoff()
    /// The errors that are retried; any other ends the follow. A stream the server ends normally is retried too:
    /// a server shutting down ends its streams, and a dashboard wants the next node's.
    public var retryable: Set<RPCError.Code> = [.unavailable, .deadlineExceeded]
    /// Whether a failure to reach any server before the first stream opened is retried. False suits a command run by
    /// hand, where a wrong address should fail at once instead of waiting forever.
    public var retryFirstConnection = true
    /// The most elements that wait for a slow reader on each stream; past that the oldest are dropped, which shows
    /// as a gap in a price stream's sequence numbers. State events are never dropped.
    public var bufferLimit = 4096

    public init() {}
}
