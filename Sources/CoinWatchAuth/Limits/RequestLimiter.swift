import Synchronization

/// Call rates per credential: one token bucket per key, per device, and per address for anonymous calls.
///
/// A session keeps the bucket of its credential, so a call takes a token without a lookup here; the table only
/// makes sure that all the connections of one credential share one bucket.
final class RequestLimiter: Sendable {
    private let table: Mutex<TrackedTable<SharedTokenBucket>>

    init(capacity: Int) {
        table = Mutex(TrackedTable(capacity: capacity))
    }

    /// The bucket shared by every call of `identity`; nil for no limit, or when the table is full of live buckets.
    func bucket(for identity: String, limit: RateLimit, nowNanos: Int64) -> SharedTokenBucket? {
        guard !limit.isUnlimited else { return nil }
        return table.withLock { table -> SharedTokenBucket? in
            if let bucket = table[identity] { return bucket }
            guard table.makeRoom(for: identity, nowNanos: nowNanos, isIdle: { $0.isFull(nowNanos: nowNanos) }) else {
                return nil
            }
            let bucket = SharedTokenBucket(rate: limit.perSecond, burst: limit.burst, nowNanos: nowNanos)
            table[identity] = bucket
            return bucket
        }
    }
}
