import CoinWatchCore
import Synchronization

/// A token bucket: `rate` tokens a second up to `burst`; each admitted event takes one.
///
/// Time is passed in (monotonic nanoseconds) rather than read here, so the event loop's per-iteration clock can
/// be reused and tests can drive time exactly.
public struct TokenBucket: Sendable, Hashable {
    public let rate: Double
    public let burst: Double
    private(set) var tokens: Double
    private(set) var lastNanos: Int64

    /// A full bucket.
    public init(rate: Double, burst: Double, nowNanos: Int64) {
        self.rate = rate
        self.burst = max(1, burst)
        self.tokens = max(1, burst)
        self.lastNanos = nowNanos
    }

    /// Takes one token if there is one; otherwise how long until there will be.
    public mutating func take(nowNanos: Int64) -> Duration? {
        refill(nowNanos)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        let seconds = (1 - tokens) / rate
        return .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }

    /// Whether the bucket is full at `nowNanos`: it then holds nothing a fresh bucket would not, so it can be dropped.
    public mutating func isFull(nowNanos: Int64) -> Bool {
        refill(nowNanos)
        return tokens >= burst
    }

    private mutating func refill(_ nowNanos: Int64) {
        guard nowNanos > lastNanos else { return }
        tokens = min(burst, tokens + Double(nowNanos - lastNanos) / 1e9 * rate)
        lastNanos = nowNanos
    }
}

/// A token bucket shared by the threads whose calls it limits (one per credential).
public final class SharedTokenBucket: Sendable {
    private let bucket: Mutex<TokenBucket>

    public init(rate: Double, burst: Double, nowNanos: Int64) {
        bucket = Mutex(TokenBucket(rate: rate, burst: burst, nowNanos: nowNanos))
    }

    /// Takes one token; nil when admitted, else the time until a token will be there.
    public func take(nowNanos: Int64) -> Duration? {
        bucket.withLock { $0.take(nowNanos: nowNanos) }
    }

    func isFull(nowNanos: Int64) -> Bool {
        bucket.withLock { $0.isFull(nowNanos: nowNanos) }
    }
}

/// A rate: so many events a second, with a burst allowance. A rate of zero means no limit.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    public var perSecond: Double
    public var burst: Double

    public init(perSecond: Double, burst: Double? = nil) {
        self.perSecond = perSecond
        self.burst = burst ?? max(1, perSecond * 2)
    }

    public static let unlimited = RateLimit(perSecond: 0, burst: 0)

    public var isUnlimited: Bool { perSecond <= 0 }

    /// `N` or `N/BURST`: N a second, bursts of BURST (default 2N); `0` for no limit.
    public init?(text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let rate = Double(parts[0]), rate >= 0, rate.isFinite else { return nil }
        if parts.count == 2 {
            guard let burst = Double(parts[1]), burst >= 1, burst.isFinite else { return nil }
            self.init(perSecond: rate, burst: burst)
        } else {
            self.init(perSecond: rate)
        }
    }

    public var description: String {
        isUnlimited ? "0" : "\(Self.format(perSecond))/\(Self.format(burst))"
    }

    /// For messages: "20 a second, bursts of 100", or "no limit".
    public var phrase: String {
        isUnlimited ? "no limit" : "\(Self.format(perSecond)) a second, bursts of \(Self.format(burst))"
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String(value)
    }
}

extension Duration {
    /// Whole milliseconds, rounded up (a retry hint is never early).
    var wholeMillisecondsRoundedUp: Int64 {
        let nanoseconds = inNanoseconds
        return nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)
    }
}
