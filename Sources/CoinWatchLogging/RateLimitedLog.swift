import CoinWatchCore

/// Decides which of a repeating kind of log line to write: the first of each kind, then at most one per
/// `interval`, saying how many were held back in between. A venue's reconnect attempts, gaps and rejected messages
/// go through it, so a venue that is down for an hour writes a handful of lines, not thousands; so does the alert
/// thread's warning that it is folding ticks.
public struct RateLimitedLog: Sendable {
    public let intervalNanos: Int64
    private var kinds: [String: (lastNanos: Int64, suppressed: Int)] = [:]

    public init(interval: Duration = .seconds(60)) {
        intervalNanos = interval.inNanoseconds
    }

    /// Whether to write a line of `kind` now; when yes, how many of its lines were held back since the last one.
    public mutating func admit(_ kind: String, now: Int64) -> Int? {
        guard let last = kinds[kind] else {
            kinds[kind] = (now, 0)
            return 0
        }
        if now - last.lastNanos >= intervalNanos {
            kinds[kind] = (now, 0)
            return last.suppressed
        }
        kinds[kind] = (last.lastNanos, last.suppressed + 1)
        return nil
    }

    /// Forgets a kind, so its next line is written at once (a source that recovered).
    public mutating func reset(_ kind: String) {
        kinds.removeValue(forKey: kind)
    }
}
