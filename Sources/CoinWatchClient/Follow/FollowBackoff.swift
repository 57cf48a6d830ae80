/// Capped exponential backoff with jitter: `initial`, then `multiplier` times the previous pause, at most `maximum`,
/// each shortened by a random part of up to `jitter` of itself so that clients cut off together do not all come
/// back at the same instant.
public struct FollowBackoff: Sendable, Hashable {
    /// The first pause: short by default, so that a restarted server is picked up fast.
    public var initial: Duration
    /// The longest pause, however long the server stays away.
    public var maximum: Duration
    /// How much each pause grows over the one before.
    public var multiplier: Double
    /// The fraction, 0 to 1, of a pause that may be taken off at random.
    public var jitter: Double

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(5), multiplier: Double = 2, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The pause before retry `attempt` (0 for the first), with `random` in 0..<1 choosing the jitter.
    public func delay(attempt: Int, random: Double = .random(in: 0..<1)) -> Duration {
        // Grown in seconds and capped as it grows, so a long outage can neither overflow Duration nor loop long.
        let cap = maximum / .seconds(1)
        var capped = min(initial / .seconds(1), cap)
        var grown = 0
        while grown < attempt && capped < cap && multiplier > 1 {
            capped = min(capped * multiplier, cap)
            grown += 1
        }
        let jittered = capped * (1 - min(max(jitter, 0), 1) * min(max(random, 0), 1))
        return .nanoseconds(Int64(jittered * 1e9))
    }
}
