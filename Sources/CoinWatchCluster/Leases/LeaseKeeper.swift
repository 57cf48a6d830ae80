import CoinWatchCore

/// The two writes a lease needs, as the leases bucket makes them; tests put a store that fails on cue in its place.
protocol LeaseStore: AnyObject {
    /// Writes `value` if the key has none; the new revision, or `conflict` when it has one.
    func create(_ key: String, _ value: [UInt8]) throws(ClusterError) -> UInt64
    /// Writes `value` if the key's last revision is `revision`; the new revision, or `conflict`.
    func update(_ key: String, _ value: [UInt8], revision: UInt64) throws(ClusterError) -> UInt64
}

extension KeyValueBucket: LeaseStore {}

/// The leases this node wants and holds, in a KV bucket whose age limit is the lease TTL.
///
/// The rule (docs/SCALING.md, "Leases and fencing"): a lease is taken with a create (the key has no value) and
/// renewed with an update on the revision this node last wrote. The server removes a value older than the TTL, so a
/// holder that stopped renewing loses the lease by the server's clock alone. The holder measures validity on its own
/// monotonic clock from the moment it *sent* the write that succeeded, and acts only until sent + TTL − margin; the
/// server cannot remove that value before its *store* time + TTL, which is later. So an old holder stops at least
/// `margin` before anyone else can take the lease, with no comparison of two machines' clocks. The revision of the
/// holder's write is its fencing token: storage-side checks (the shard checkpoint's compare-and-set) use it.
///
/// Not thread-safe: one thread (the node's `cw-cluster` control thread) calls `tick` and reads `held`.
final class LeaseKeeper {
    struct Lease: Sendable, Equatable {
        var key: String
        /// The revision of the holder's last successful write: its fencing token.
        var revision: UInt64
        /// When the lease was taken and when it was last renewed (monotonic nanoseconds, at send time).
        var acquiredAt: Int64
        var renewedAt: Int64
        /// The holder may act until then (monotonic nanoseconds).
        var validUntil: Int64
    }

    enum Change: Sendable, Equatable {
        case acquired(Lease)
        case lost(key: String, reason: String)

        var key: String {
            switch self {
            case .acquired(let lease): lease.key
            case .lost(let key, _): key
            }
        }
    }

    let bucket: any LeaseStore
    let nodeID: String
    let ttlNs: Int64
    let marginNs: Int64
    let renewEveryNs: Int64
    private(set) var held: [String: Lease] = [:]
    private var wanted: Set<String> = []
    private let now: () -> Int64

    init(bucket: any LeaseStore, nodeID: String, ttl: Duration, now: @escaping () -> Int64 = MonotonicClock.nanoseconds) {
        self.bucket = bucket
        self.nodeID = nodeID
        self.ttlNs = ttl.inNanoseconds
        // A sixth of the TTL (1 s of the default 6 s): the gap between the old holder stopping and the earliest a
        // new one may start.
        self.marginNs = max(ttl.inNanoseconds / 6, 1)
        self.renewEveryNs = max(ttl.inNanoseconds / 3, 1)
        self.now = now
    }

    /// The keys this node tries to take when they are free.
    func want(_ keys: Set<String>) {
        wanted = keys
    }

    func isHeld(_ key: String) -> Bool {
        guard let lease = held[key] else { return false }
        return now() < lease.validUntil
    }

    /// Renews what is held and due, drops what is no longer valid or no longer wanted, tries to take what is wanted
    /// and free. Returns what changed, losses first (a caller stops acting on them before starting anything new).
    ///
    /// With `connected` false (the node's NATS connection is down) nothing is sent: each write would wait out its
    /// timeout, one lease after another, and the expiries behind it would be seen that much late. Only what the
    /// clock says has lapsed (or is no longer wanted) is dropped. The same holds while connected when JetStream does
    /// not answer (a stream leader being elected): after the first write of a tick that timed out or found the
    /// bucket unavailable, the tick sends nothing more, so one tick waits out at most one timeout, not one per lease
    /// (dozens of shards at 5 s each would hold the control thread for minutes, and every lease taken early in such
    /// a tick would lapse before the tick ended).
    func tick(connected: Bool = true) -> [Change] {
        var lost: [Change] = []
        var gained: [Change] = []
        var sending = connected
        let value = Array("node=\(nodeID)".utf8)
        for (key, lease) in held.sorted(by: { $0.key < $1.key }) {
            let current = now()
            if current >= lease.validUntil {
                held[key] = nil
                lost.append(.lost(key: key, reason: "not renewed in time"))
                continue
            }
            if !wanted.contains(key) {
                held[key] = nil
                // Giving the lease up early: a write that sets nothing, so the next taker's create fails until the
                // value ages out — safe, only slower. The value is left to expire.
                lost.append(.lost(key: key, reason: "released"))
                continue
            }
            guard sending, current - lease.renewedAt >= renewEveryNs else { continue }
            do {
                let revision = try bucket.update(key, value, revision: lease.revision)
                held[key] = Lease(
                    key: key, revision: revision, acquiredAt: lease.acquiredAt, renewedAt: current,
                    validUntil: current + ttlNs - marginNs)
            } catch {
                if error.code == .conflict {
                    // The value expired (another node may hold it now): stop at once.
                    held[key] = nil
                    lost.append(.lost(key: key, reason: "taken over or expired"))
                } else {
                    // unavailable / timeout: keep acting while the last renewal is valid, try again next tick.
                    sending = false
                }
            }
        }
        for key in wanted.sorted() where sending && held[key] == nil {
            let sent = now()
            do {
                let revision = try bucket.create(key, value)
                let lease = Lease(key: key, revision: revision, acquiredAt: sent, renewedAt: sent,
                                  validUntil: sent + ttlNs - marginNs)
                held[key] = lease
                gained.append(.acquired(lease))
            } catch {
                // conflict: someone holds it; anything else: try again next tick.
                if error.code != .conflict { sending = false }
            }
        }
        return lost + gained
    }

    /// Stops holding everything (the values age out on the server).
    func releaseAll() -> [Change] {
        defer { held.removeAll() }
        return held.keys.sorted().map { .lost(key: $0, reason: "released") }
    }
}
