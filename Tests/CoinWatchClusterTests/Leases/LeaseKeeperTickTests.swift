import Synchronization
import Testing
@testable import CoinWatchCluster

/// One tick of the lease keeper against a store that stops answering: it waits out one write, not one per lease.
@Suite struct LeaseKeeperTickTests {
    /// Takes and renews every write while `answering`; otherwise each write fails with `timeout` (as a JetStream
    /// whose stream leader is being elected does, after waiting). Counts the writes it was sent.
    final class Store: LeaseStore, @unchecked Sendable {
        var answering = true
        var creates = 0
        var updates = 0
        private var revisions: [String: UInt64] = [:]
        private var next: UInt64 = 1

        func create(_ key: String, _ value: [UInt8]) throws(ClusterError) -> UInt64 {
            creates += 1
            guard answering else { throw ClusterError(code: .timeout, message: "no answer") }
            guard revisions[key] == nil else { throw ClusterError(code: .conflict, message: "taken") }
            return write(key)
        }

        func update(_ key: String, _ value: [UInt8], revision: UInt64) throws(ClusterError) -> UInt64 {
            updates += 1
            guard answering else { throw ClusterError(code: .timeout, message: "no answer") }
            guard revisions[key] == revision else { throw ClusterError(code: .conflict, message: "wrong revision") }
            return write(key)
        }

        private func write(_ key: String) -> UInt64 {
            defer { next += 1 }
            revisions[key] = next
            return next
        }
    }

    static let keys: Set<String> = Set((0..<10).map { "shard.\($0)" })

    @Test("no answer: a tick stops sending after its first unanswered write, and keeps what is still valid")
    func oneTimeoutPerTick() {
        let store = Store()
        let clock = Mutex<Int64>(0)
        let keeper = LeaseKeeper(bucket: store, nodeID: "n", ttl: .seconds(6), now: { clock.withLock { $0 } })
        keeper.want(Self.keys)
        #expect(keeper.tick().count == 10)
        #expect(store.creates == 10)
        // Renewals are due (a third of the TTL later), and the store stops answering: one update is sent, not ten;
        // every lease is still valid by the holder's clock, so none is given up.
        store.answering = false
        clock.withLock { $0 = 2_500_000_000 }
        #expect(keeper.tick().isEmpty)
        #expect(store.updates == 1)
        #expect(keeper.held.count == 10 && Self.keys.allSatisfy(keeper.isHeld))
        // Answering again: the next tick renews them all.
        store.answering = true
        clock.withLock { $0 = 3_000_000_000 }
        #expect(keeper.tick().isEmpty)
        #expect(store.updates == 11)
        #expect(keeper.held.values.allSatisfy { $0.renewedAt == 3_000_000_000 })
    }

    @Test("no answer: a tick tries one free lease, not every one it wants")
    func oneCreatePerTick() {
        let store = Store()
        store.answering = false
        let keeper = LeaseKeeper(bucket: store, nodeID: "n", ttl: .seconds(6), now: { 0 })
        keeper.want(Self.keys)
        #expect(keeper.tick().isEmpty)
        #expect(store.creates == 1)
        store.answering = true
        #expect(keeper.tick().count == 10)
        #expect(store.creates == 11)
    }

    @Test("a conflict is an answer: the tick goes on to the other leases")
    func conflictsGoOn() {
        let store = Store()
        let other = LeaseKeeper(bucket: store, nodeID: "other", ttl: .seconds(6), now: { 0 })
        other.want(["shard.0", "shard.1"])
        #expect(other.tick().count == 2)
        let keeper = LeaseKeeper(bucket: store, nodeID: "n", ttl: .seconds(6), now: { 0 })
        keeper.want(Self.keys)
        #expect(keeper.tick().map(\.key).sorted() == Self.keys.subtracting(["shard.0", "shard.1"]).sorted())
    }
}
