/// Capped exponential backoff with jitter: `initial`, then `multiplier` times the previous pause, at most `maximum`,
/// each shortened by a random part of up to `jitter` of itself so that clients cut off together do not all come
/// back at the same instant.
public struct FollowBackoff: Sendable, Hashable {
    /// Short, so that a restarted server is picked up fast.
    public var initial: Duration = .milliseconds(250)
    public var maximum: Duration = .seconds(5)
    public var multiplier = 2.0
    /// The fraction, 0 to 1, of a pause that may be taken off at random.
    public var jitter = 0.2

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(5), multiplier: Double = 2, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The pause before retry `attempt` (0 for the first), with `random` in 0..<1 choosing the jitter.
    public func delay(attempt: Int, random: Double = .random(in: 0..<1)) -> Duration {
        // Grown in seconds and capped as it grows, so a long outage cannot overflow Duration.
        let cap = maximum / .seconds(1)
        var capped = min(initial / .seconds(1), cap)
        for _ in 0..<max(attempt, 0) where capped < cap { capped = min(capped * multiplier, cap) }
        let jittered = capped * (1 - min(max(jitter, 0), 1) * min(max(random, 0), 1))
        return .nanoseconds(Int64(jittered * 1e9))
    }
}
