import CoinWatchModel
import CoinWatchService
import Synchronization

/// The alert shards this node owns, as the alert service's gate: a bit per shard, set while this node holds the
/// shard's lease (`shard.<NN>` in the leases bucket) and cleared the moment the lease is lost or given up.
///
/// Which shards a node tries to take is decided by rendezvous hashing over the live members: shard s goes to the
/// member m with the highest `fnv1a64("m/s")`. Every node computes the same assignment from the same member list,
/// so nodes do not compete for the same lease; when a member's entry lapses its shards are spread over the others,
/// and a node that joins takes the shards it ranks first for once their holders give them up.
final class ClusterShards: AlertGate {
    private let owned = Atomic<UInt64>(0)

    func fires(for device: DeviceID) -> Bool {
        owned.load(ordering: .acquiring) & (1 << UInt64(AlertShards.shard(of: device))) != 0
    }

    var ownedShards: [Int] {
        let mask = owned.load(ordering: .relaxed)
        return (0..<AlertShards.count).filter { mask & (1 << UInt64($0)) != 0 }
    }

    /// Control thread: the lease for `shard` was taken (`true`) or lost (`false`).
    func set(_ shard: Int, owned isOwned: Bool) {
        let bit: UInt64 = 1 << UInt64(shard)
        if isOwned {
            owned.bitwiseOr(bit, ordering: .releasing)
        } else {
            owned.bitwiseAnd(~bit, ordering: .releasing)
        }
    }

    static func leaseKey(_ shard: Int) -> String {
        shard < 10 ? "shard.0\(shard)" : "shard.\(shard)"
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
