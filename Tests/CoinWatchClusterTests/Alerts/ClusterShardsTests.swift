@testable import CoinWatchCluster
import CoinWatchModel
import CoinWatchService
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

struct ClusterShardsTests {
    @Test func everyShardHasExactlyOneAssignedNode() {
        for members in [["a"], ["a", "b"], ["a", "b", "c"], ["n1", "n2", "n3", "n4", "n5"]] {
            var owners = [Int](repeating: 0, count: AlertShards.count)
            for node in members {
                for shard in ClusterShards.assigned(to: node, members: members) { owners[shard] += 1 }
            }
            #expect(owners.allSatisfy { $0 == 1 }, "\(members)")
            // Spread out: no node of several gets fewer than half its fair share.
            for node in members where members.count > 1 {
                let count = ClusterShards.assigned(to: node, members: members).count
                #expect(count >= AlertShards.count / members.count / 2, "\(node) of \(members): \(count)")
            }
        }
        for members in [["a", "b"], ["a", "b", "c"], ["node-1", "node-2", "node-3"]] {
            for node in members where members.count > 1 {
                let count = ClusterShards.assigned(to: node, members: members).count
                #expect(count >= AlertShards.count / members.count / 2, "\(node) of \(members): \(count)")
            }
        }
        // Losing a member moves only its shards.
        let before = ClusterShards.assigned(to: "a", members: ["a", "b", "c"])
        let after = ClusterShards.assigned(to: "a", members: ["a", "b"])
        #expect(before.isSubset(of: after))
        #expect(ClusterShards.assigned(to: "a", members: ["a"]).count == AlertShards.count)
    }

    @Test func theGateFiresOnlyForOwnedShards() throws {
        let shards = ClusterShards()
        let device = try DeviceID(validating: "phone-1")
        #expect(!shards.fires(for: device))
        shards.hold(AlertShards.shard(of: device), until: .max)
        #expect(shards.fires(for: device))
        #expect(shards.ownedShards == [AlertShards.shard(of: device)])
        shards.release(AlertShards.shard(of: device))
        #expect(!shards.fires(for: device))
        #expect(ClusterShards.shard(ofLeaseKey: ClusterShards.leaseKey(7)) == 7)
        #expect(ClusterShards.leaseKey(7) == "shard.07")
    }

    @Test("a lease's deadline stops the gate by the clock alone, with nobody releasing it")
    func theGateStopsAtTheDeadline() throws {
        let clock = Mutex<Int64>(1_000)
        let shards = ClusterShards(now: { clock.withLock { $0 } })
        let device = try DeviceID(validating: "phone-1")
        let shard = AlertShards.shard(of: device)
        shards.hold(shard, until: 2_000)
        #expect(shards.fires(for: device) && shards.ownedShards == [shard])
        clock.withLock { $0 = 1_999 }
        #expect(shards.fires(for: device))
        clock.withLock { $0 = 2_000 }
        #expect(!shards.fires(for: device) && shards.ownedShards.isEmpty)
        // A renewal moves the deadline on.
        shards.hold(shard, until: 3_000)
        #expect(shards.fires(for: device))
    }
}
