@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation
import Testing

/// The nats.c wrapper against a real nats-server: what the cluster layer relies on JetStream for.
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"))
struct JetStreamTests {
    @Test func coreMessagesReachASynchronousSubscription() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let connection = try testConnection(nats.urls)
        let subscription = try connection.subscribe("t.prices.*")
        try connection.flush(timeoutMs: 5_000)
        for index in 0..<100 {
            try connection.publish("t.prices.BTC", Array("\(index)".utf8))
        }
        var received: [String] = []
        while received.count < 100, let message = try subscription.next(timeoutMs: 10_000) {
            received.append(String(decoding: message.data, as: UTF8.self))
        }
        #expect(received == (0..<100).map(String.init))
        #expect(try subscription.next(timeoutMs: 0) == nil)
    }

    @Test func conditionalWritesLetExactlyOneOfTwoWritersWin() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let connection = try testConnection(nats.urls)
        let jetStream = try JetStream(connection: connection)
        let bucket = try jetStream.keyValue(.init(name: "t-settings"))
        let first = try bucket.create("phone-1", [1])
        #expect(throws: ClusterError.self) { try bucket.create("phone-1", [2]) }
        // Two writers that both read revision `first`: the second finds another last sequence.
        let second = try bucket.update("phone-1", [3], revision: first)
        do {
            try bucket.update("phone-1", [4], revision: first)
            Issue.record("a stale revision was accepted")
        } catch {
            #expect(error.code == .conflict)
        }
        #expect(try bucket.get("phone-1") == KVEntry(key: "phone-1", value: [3], revision: second))
        #expect(try bucket.get("phone-2") == nil)
        try bucket.put("phone-2", [])
        #expect(try bucket.entries().map(\.key).sorted() == ["phone-1", "phone-2"])
    }

    @Test func anOrderedConsumerStartsWhereItIsTold() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let connection = try testConnection(nats.urls)
        let jetStream = try JetStream(connection: connection)
        let bucket = try jetStream.keyValue(.init(name: "t-log"))
        var revisions: [UInt64] = []
        for index in 0..<10 {
            revisions.append(try bucket.put("k\(index % 3)", [UInt8(index)]))
        }
        let consumer = try jetStream.orderedConsumer(
            stream: bucket.streamName, subject: "$KV.t-log.>", startSequence: revisions[5])
        var seen: [UInt64] = []
        while let message = try consumer.next(timeoutMs: 5_000, jetStream: true) {
            seen.append(message.streamSequence)
            if message.pending == 0 { break }
        }
        // History 1 keeps each key's last value: what is left from revision 6 on is each key's last write.
        #expect(seen == [revisions[7], revisions[8], revisions[9]])
    }

    @Test func aBucketWithATimeToLiveForgetsValuesNotWrittenAgain() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let connection = try testConnection(nats.urls)
        let jetStream = try JetStream(connection: connection)
        let bucket = try jetStream.keyValue(.init(name: "t-leases", ttlNs: 1_000_000_000))
        try bucket.create("shard.01", Array("a".utf8))
        #expect(throws: ClusterError.self) { try bucket.create("shard.01", Array("b".utf8)) }
        // The server removes the value once it is older than the bucket's age; then a create succeeds.
        let taken = try await Polling.until { (try? bucket.create("shard.01", Array("b".utf8))) != nil }
        #expect(taken)
    }
}
