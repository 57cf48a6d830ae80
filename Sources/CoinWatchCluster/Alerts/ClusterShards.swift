import CoinWatchCore
import CoinWatchModel
import CoinWatchService
import Synchronization

/// The alert shards this node owns, as the alert service's gate: per shard, the moment (monotonic nanoseconds)
/// until which this node may act on the shard's lease (`shard.<NN>` in the leases bucket), moved on by each
/// renewal and cleared when the lease is lost or given up.
///
/// The gate compares that moment with the clock itself, rather than trusting a flag the control thread clears:
/// the control thread may be blocked in a NATS call for seconds when the node is cut off from NATS, and the lease
/// rule (docs/SCALING.md, "Leases and fencing") promises that the old holder stops at send + TTL − margin, before
/// the server lets another node take the lease, whatever this node's threads are doing.
///
/// Which shards a node tries to take is decided by rendezvous hashing over the live members: shard s goes to the
/// member m with the highest `fnv1a64("m/s")`. Every node computes the same assignment from the same member list,
/// so nodes do not compete for the same lease; when a member's entry lapses its shards are spread over the others,
/// and a node that joins takes the shards it ranks first for once their holders give them up.
final class ClusterShards: AlertGate {
    /// Per shard, until when this node may act on its lease (0: not held).
    private let deadlines = Mutex<[Int64]>(Array(repeating: 0, count: AlertShards.count))
    private let now: @Sendable () -> Int64

    init(now: @escaping @Sendable () -> Int64 = { MonotonicClock.nanoseconds() }) {
        self.now = now
    }

    func fires(for device: DeviceID) -> Bool {
        let shard = AlertShards.shard(of: device)
        let deadline = deadlines.withLock { $0[shard] }
        return now() < deadline
    }

    /// The shards this node may act on now.
    var ownedShards: [Int] {
        let current = deadlines.withLock { $0 }
        let time = now()
        return (0..<AlertShards.count).filter { time < current[$0] }
    }

    /// Control thread: the lease for `shard` was taken or renewed, valid until `deadline`.
    func hold(_ shard: Int, until deadline: Int64) {
        deadlines.withLock { $0[shard] = deadline }
    }

    /// Control thread: the lease for `shard` was lost or given up.
    func release(_ shard: Int) {
        deadlines.withLock { $0[shard] = 0 }
    }

    static func leaseKey(_ shard: Int) -> String {
        "shard.\(ClusterLayout.shardToken(shard))"
    }

    static func shard(ofLeaseKey key: String) -> Int? {
        guard key.hasPrefix("shard.") else { return nil }
        return Int(key.dropFirst("shard.".count))
    }

    /// The shards `node` should hold when `members` are live (rendezvous hashing; `node` counts as a member).
    static func assigned(to node: String, members: [String]) -> Set<Int> {
        let everyone = Set(members).union([node])
        var mine = Set<Int>()
        for shard in 0..<AlertShards.count {
            let winner = everyone.max { lhs, rhs in
                let left = rank(lhs, shard)
                let right = rank(rhs, shard)
                return left != right ? left < right : lhs < rhs
            }
            if winner == node { mine.insert(shard) }
        }
        return mine
    }

    /// FNV-1a of the node id, mixed with the shard by SplitMix64's finaliser: FNV alone ranks ids that differ in
    /// one byte in nearly the same order for every shard, which would give one node every shard.
    static func rank(_ node: String, _ shard: Int) -> UInt64 {
        var x = AlertShards.hash(node) &+ UInt64(shard + 1) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
