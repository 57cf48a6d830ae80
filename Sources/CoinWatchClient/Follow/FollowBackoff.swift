import CoinWatchCore

/// Capped exponential backoff with jitter: `initial`, doubled after each failed attempt, at most `maximum`
/// (`BackoffCeiling`, the rule every retry pause of the project grows by), each pause shortened by a random part of
/// up to `jitter` of itself so that clients cut off together do not all come back at the same instant.
public struct FollowBackoff: Sendable, Hashable {
    /// The first pause: short by default, so that a restarted server is picked up fast.
    public var initial: Duration
    /// The longest pause, however long the server stays away.
    public var maximum: Duration
    /// The fraction, 0 to 1, of a pause that may be taken off at random.
    public var jitter: Double

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(5), jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The pause before retry `attempt` (0 for the first), with `random` in 0..<1 choosing the jitter.
    public func delay(attempt: Int, random: Double = .random(in: 0..<1)) -> Duration {
        let ceiling = BackoffCeiling.of(base: initial.inNanoseconds, cap: maximum.inNanoseconds, doublings: attempt)
        let jittered = Double(ceiling) * (1 - min(max(jitter, 0), 1) * min(max(random, 0), 1))
        return .nanoseconds(Int64(jittered))
    }
}
