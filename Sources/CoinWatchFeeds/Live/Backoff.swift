import CoinWatchCore
/// How long a source waits before it reconnects: capped exponential backoff with full jitter (a uniformly random
/// wait between zero and the current ceiling, the ceiling doubling per failure from `base` to `cap`), so sources
/// that failed together do not come back together.
///
/// A venue that said no (an error event, a refused upgrade) waits at least `errorFloor` and its ceiling jumps two
/// steps; a venue that rate-limited us (HTTP 429, a rate-limit error) waits between `cap / 2` and `cap`, or longer
/// when it sent `Retry-After`. A connection that delivered data resets the ceiling.
public struct Backoff: Sendable {
    public struct Configuration: Sendable, Hashable {
        public var base: Duration = .seconds(1)
        public var cap: Duration = .seconds(60)
        /// The least wait after a venue's error.
        public var errorFloor: Duration = .seconds(5)
        /// The longest `Retry-After` honoured.
        public var maxRetryAfter: Duration = .seconds(600)

        public init(base: Duration = .seconds(1), cap: Duration = .seconds(60), errorFloor: Duration = .seconds(5)) {
            self.base = base
            self.cap = cap
            self.errorFloor = errorFloor
        }
    }

    /// Why the last connection ended.
    public enum Failure: Sendable, Hashable {
        /// Refused, reset, timed out, died: try again soon.
        case connection
        /// The venue answered with an error.
        case venueError
        /// The venue asked us to slow down; with its `Retry-After` in seconds, if it sent one.
        case rateLimited(retryAfterSeconds: Int?)
    }

    public let configuration: Configuration
    /// Failures since the last connection that delivered data.
    public private(set) var failures = 0
    private var random: @Sendable (Int64) -> Int64

    /// - Parameter random: a uniform random number in `0...bound` (injected for tests).
    public init(configuration: Configuration = Configuration(),
                random: @escaping @Sendable (Int64) -> Int64 = { Int64.random(in: 0...$0) }) {
        self.configuration = configuration
        self.random = random
    }

    /// The data flowed: the next failure starts from `base` again.
    public mutating func reset() {
        failures = 0
    }

    /// The wait, in nanoseconds, before reconnecting after `failure`.
    public mutating func delay(after failure: Failure) -> Int64 {
        let base = max(1, configuration.base.inNanoseconds)
        let cap = max(base, configuration.cap.inNanoseconds)
        switch failure {
        case .connection:
            failures += 1
        case .venueError:
            failures += 3
        case .rateLimited(let retryAfter):
            failures += 3
            let floor = cap / 2
            let wait = floor + random(cap - floor)
            let asked = retryAfter.map { min(Int64($0) * 1_000_000_000, configuration.maxRetryAfter.inNanoseconds) } ?? 0
            return max(wait, asked)
        }
        let ceiling = BackoffCeiling.of(base: base, cap: cap, doublings: failures - 1)
        let wait = random(ceiling)
        if failure == .venueError {
            return max(wait, configuration.errorFloor.inNanoseconds)
        }
        return wait
    }
}
