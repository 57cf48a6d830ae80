@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// Leases against a real nats-server; nats.c calls block, so they run on a thread of their own.
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"))
struct LeaseKeeperTests {
    struct Outcome: Sendable {
        var firstTook: [String] = []
        var secondTook: [String] = []
        var exclusive = false
        var passedOn = false
        var oldHolderStopped = false
    }

    @Test func aLeaseHasOneHolderAndPassesOnWhenItLapses() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let outcome = try await onOwnThread { () throws -> Outcome in
            let connections = try (0..<2).map { _ in try testConnection(urls) }
            defer { connections.forEach { $0.close() } }
            let keepers = try connections.enumerated().map { index, connection in
                let jetStream = try JetStream(connection: connection)
                let bucket = try jetStream.keyValue(.init(name: "t-leases", ttlNs: 2_000_000_000))
                return LeaseKeeper(bucket: bucket, nodeID: "node-\(index)", ttl: .seconds(2))
            }
            keepers.forEach { $0.want(["shard.01"]) }
            var outcome = Outcome()
            outcome.firstTook = keepers[0].tick().map(\.key)
            outcome.secondTook = keepers[1].tick().map(\.key)
            outcome.exclusive = keepers[0].isHeld("shard.01") && !keepers[1].isHeld("shard.01")
            // The holder stops renewing (as if it died): the other takes the lease once the server let it lapse,
            // and by then the old holder's own clock says it is no longer valid.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, !outcome.passedOn {
                outcome.passedOn = !keepers[1].tick().isEmpty
                if !outcome.passedOn { usleep(20_000) }
            }
            outcome.oldHolderStopped = !keepers[0].isHeld("shard.01")
            return outcome
        }
        #expect(outcome.firstTook == ["shard.01"])
        #expect(outcome.secondTook.isEmpty)
        #expect(outcome.exclusive)
        #expect(outcome.passedOn)
        #expect(outcome.oldHolderStopped)
    }

    @Test("cut off from NATS, a holder sends nothing and drops each lease when its own clock says it lapsed")
    func aCutOffHolderLetsItsLeasesLapseByTheClock() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let clock = Mutex<Int64>(0)
        let (taken, early, late, created) = try await onOwnThread { () throws -> ([String], [LeaseKeeper.Change], [LeaseKeeper.Change], Bool) in
            let connection = try testConnection(urls)
            defer { connection.close() }
            let bucket = try JetStream(connection: connection).keyValue(.init(name: "t-cut", ttlNs: 2_000_000_000))
            let keeper = LeaseKeeper(bucket: bucket, nodeID: "cut", ttl: .seconds(2), now: { clock.withLock { $0 } })
            keeper.want(["shard.01", "shard.02"])
            let taken = keeper.tick().map(\.key)
            keeper.want(["shard.01", "shard.02", "shard.03"])
            // Still valid (TTL 2 s less the 1/6 margin): kept, neither renewed nor is shard.03 tried.
            clock.withLock { $0 = 1_500_000_000 }
            let early = keeper.tick(connected: false)
            let created = (try? bucket.get("shard.03")) != nil
            clock.withLock { $0 = 1_700_000_000 }
            let late = keeper.tick(connected: false)
            return (taken, early, late, created)
        }
        #expect(taken == ["shard.01", "shard.02"])
        #expect(early.isEmpty)
        #expect(!created, "nothing is written while cut off")
        #expect(late.map(\.key) == ["shard.01", "shard.02"])
    }
}
