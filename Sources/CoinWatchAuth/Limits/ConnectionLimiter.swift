public import CoinWatchRPC
import Synchronization

/// Open and new connections per remote address.
public final class ConnectionLimiter: Sendable {
    struct Entry {
        var open: Int
        var bucket: TokenBucket
    }

    let maxOpen: Int
    let rate: RateLimit
    /// Connections refused so far (for the authoriser's metrics).
    let refused = Atomic<UInt64>(0)
    private let table: Mutex<TrackedTable<Entry>>

    public init(maxOpenPerAddress: Int, rate: RateLimit, capacity: Int) {
        maxOpen = maxOpenPerAddress
        self.rate = rate
        table = Mutex(TrackedTable(capacity: capacity))
    }

    /// Counts a new connection from `peer`, or says why it is refused (RESOURCE_EXHAUSTED, with when to retry for
    /// a rate). A connection admitted here must be passed to `closed` when it ends.
    public func admit(_ peer: PeerAddress, nowNanos: Int64) -> RPCError? {
        guard !peer.isLoopback, maxOpen > 0 || !rate.isUnlimited else { return nil }
        let rate = self.rate
        let refusal = table.withLock { table -> RPCError? in
            guard table.makeRoom(for: peer.limitKey, nowNanos: nowNanos, isIdle: { entry in
                entry.open == 0 && entry.bucket.isFull(nowNanos: nowNanos)
            }) else {
                return nil
            }
            var entry = table[peer.limitKey]
                ?? Entry(open: 0, bucket: TokenBucket(rate: rate.perSecond, burst: rate.burst, nowNanos: nowNanos))
            if maxOpen > 0, entry.open >= maxOpen {
                return RPCError(
                    code: .resourceExhausted,
                    message: "too many connections from \(peer.limitKey) (at most \(maxOpen) at once)")
            }
            if !rate.isUnlimited, let wait = entry.bucket.take(nowNanos: nowNanos) {
                table[peer.limitKey] = entry
                return RPCError(
                    code: .resourceExhausted,
                    message: "too many new connections from \(peer.limitKey) (\(rate.phrase)); "
                        + "retry after \(wait.wholeMillisecondsRoundedUp) ms")
            }
            entry.open += 1
            table[peer.limitKey] = entry
            return nil
        }
        if refusal != nil { refused.add(1, ordering: .relaxed) }
        return refusal
    }

    /// A connection counted by `admit` ended.
    public func closed(_ peer: PeerAddress) {
        guard !peer.isLoopback, maxOpen > 0 || !rate.isUnlimited else { return }
        table.withLock { table in
            guard var entry = table[peer.limitKey], entry.open > 0 else { return }
            entry.open -= 1
            table[peer.limitKey] = entry
        }
    }

    /// Open connections counted for the address (tests, diagnostics).
    public func openConnections(_ peer: PeerAddress) -> Int {
        table.withLock { $0[peer.limitKey]?.open ?? 0 }
    }
}
