import CoinWatchCore
import Synchronization

/// Failed authentications per address: how many may be tried, and when to log them.
///
/// An address past its rate has its attempts refused without checking them. Logging is one line per address
/// per interval: the first failure of an interval is logged at once, with the count of those the previous line
/// did not report, and the others are only counted. The line names the reason and the credential's kind or key
/// id (`Credential.logName`), never a secret.
final class FailureTracker: Sendable {
    struct Entry {
        var bucket: TokenBucket
        var unreported = 0
        var lastLogNanos: Int64 = .min
    }

    /// What to log for a failure, if anything: the failures not yet reported (including this one).
    struct Report {
        let failures: Int
    }

    let rate: RateLimit
    let interval: Int64
    private let table: Mutex<TrackedTable<Entry>>

    init(rate: RateLimit, logInterval: Duration, capacity: Int) {
        self.rate = rate
        interval = logInterval.inNanoseconds
        table = Mutex(TrackedTable(capacity: capacity))
    }

    /// Nil when `peer` may try to authenticate; else how long until it may. Loopback peers are never held back.
    func blocked(_ peer: PeerAddress, nowNanos: Int64) -> Duration? {
        guard !peer.isLoopback, !rate.isUnlimited else { return nil }
        return table.withLock { table -> Duration? in
            guard var entry = table[peer.limitKey] else { return nil }
            var probe = entry.bucket
            // Peek: a token must be there for the attempt, but only a failure spends one.
            guard let wait = probe.take(nowNanos: nowNanos) else { return nil }
            entry.bucket = probe
            table[peer.limitKey] = entry
            return wait
        }
    }

    /// Counts a failure from `peer`; the report to log, when a line is due.
    func record(_ peer: PeerAddress, nowNanos: Int64) -> Report? {
        let rate = self.rate
        let interval = self.interval
        return table.withLock { table -> Report? in
            guard table.makeRoom(for: peer.limitKey, nowNanos: nowNanos, isIdle: { entry in
                entry.unreported == 0 && entry.bucket.isFull(nowNanos: nowNanos) && nowNanos - entry.lastLogNanos >= interval
            }) else {
                return nil
            }
            var entry = table[peer.limitKey] ?? Entry(
                bucket: TokenBucket(rate: max(rate.perSecond, 1e-9), burst: rate.isUnlimited ? 1 : rate.burst, nowNanos: nowNanos))
            if !peer.isLoopback && !rate.isUnlimited { _ = entry.bucket.take(nowNanos: nowNanos) }
            entry.unreported += 1
            var report: Report?
            if entry.lastLogNanos == .min || nowNanos - entry.lastLogNanos >= interval {
                report = Report(failures: entry.unreported)
                entry.unreported = 0
                entry.lastLogNanos = nowNanos
            }
            table[peer.limitKey] = entry
            return report
        }
    }
}
