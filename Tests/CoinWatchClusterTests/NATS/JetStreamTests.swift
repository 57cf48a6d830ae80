@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation
import Testing

/// The nats.c wrapper against a real nats-server: what the cluster layer relies on JetStream for.
///
/// Every nats.c call blocks its thread, so each test runs them on a thread of its own (`onOwnThread`), never on
/// the cooperative pool the other tests share, and checks what that thread returns.
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"), .serialized)
struct JetStreamTests {
    @Test func coreMessagesReachASynchronousSubscription() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (received, leftOver) = try await onOwnThread { () throws -> ([String], Bool) in
            let connection = try testConnection(urls)
            let subscription = try connection.subscribe("t.prices.*")
            try connection.flush(timeoutMs: 5_000)
            for index in 0..<100 {
                try connection.publish("t.prices.BTC", Array("\(index)".utf8))
            }
            var received: [String] = []
            while received.count < 100, let message = try subscription.next(timeoutMs: 10_000) {
                received.append(String(decoding: message.data, as: UTF8.self))
            }
            return (received, try subscription.next(timeoutMs: 0) != nil)
        }
        #expect(received == (0..<100).map(String.init))
        #expect(!leftOver)
    }

    struct WriterOutcomes: Sendable {
        var secondCreateRefused = false
        var staleUpdate: ClusterError.Code?
        var current: KVEntry?
        var expected: KVEntry?
        var missing: KVEntry?
        var keys: [String] = []
    }

    @Test func conditionalWritesLetExactlyOneOfTwoWritersWin() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let outcomes = try await onOwnThread { () throws -> WriterOutcomes in
            let connection = try testConnection(urls)
            let jetStream = try JetStream(connection: connection)
            let bucket = try jetStream.keyValue(.init(name: "t-settings"))
            var outcomes = WriterOutcomes()
            let first = try bucket.create("phone-1", [1])
            outcomes.secondCreateRefused = (try? bucket.create("phone-1", [2])) == nil
            // Two writers that both read revision `first`: the second finds another last sequence.
            let second = try bucket.update("phone-1", [3], revision: first)
            do throws(ClusterError) {
                try bucket.update("phone-1", [4], revision: first)
            } catch {
                outcomes.staleUpdate = error.code
            }
            outcomes.current = try bucket.get("phone-1")
            outcomes.expected = KVEntry(key: "phone-1", value: [3], revision: second)
            outcomes.missing = try bucket.get("phone-2")
            try bucket.put("phone-2", [])
            outcomes.keys = try bucket.entries().map(\.key).sorted()
            return outcomes
        }
        #expect(outcomes.secondCreateRefused)
        #expect(outcomes.staleUpdate == .conflict, "a stale revision must be refused as a conflict")
        #expect(outcomes.current == outcomes.expected)
        #expect(outcomes.missing == nil)
        #expect(outcomes.keys == ["phone-1", "phone-2"])
    }

    @Test("a write while the connection is down fails at once and is not stored when the connection comes back")
    func writesWhileDisconnectedAreRefused() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (connection, bucket) = try await onOwnThread { () throws -> (NATSConnection, KeyValueBucket) in
            let connection = try testConnection(urls)
            let bucket = try JetStream(connection: connection).keyValue(.init(name: "t-outage"))
            try bucket.put("phone-1", [1])
            return (connection, bucket)
        }
        defer { connection.close() }
        nats.servers[0].kill()
        #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(20)) { connection.state != .connected })
        let single = try await onOwnThread { () -> ClusterError? in
            do throws(ClusterError) {
                try bucket.put("phone-1", [2])
                return nil
            } catch {
                return error
            }
        }
        #expect(single?.code == .unavailable)
        #expect(single?.message == "publishing on $KV.t-outage.phone-1: not connected to NATS", "\(String(describing: single))")
        let batch = try await onOwnThread { bucket.updateAll([("phone-2", [3], 0)]) }
        #expect(batch.count == 1)
        if case .failure(let error) = batch.first { #expect(error.code == .unavailable) } else { Issue.record("stored while down") }
        try await nats.servers[0].start()
        #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(20)) { connection.state == .connected })
        // Give a buffered write every chance to arrive: a write made now is answered after anything sent before it.
        let after = try await onOwnThread { () throws -> (KVEntry?, KVEntry?) in
            try bucket.put("phone-3", [4])
            return (try bucket.get("phone-1"), try bucket.get("phone-2"))
        }
        #expect(after.0?.value == [1], "the refused write was stored on reconnecting")
        #expect(after.1 == nil, "the refused batch was stored on reconnecting")
    }

    /// What a batch of conditional writes came to: each result's revision or error code, in order, and the values.
    struct BatchOutcome: Sendable {
        var results: [String] = []
        var values: [String: [UInt8]] = [:]
        var revisionsMatch = false
    }

    @Test("conditional writes of several keys in one batch: each gets its own outcome, in order")
    func aBatchOfConditionalWrites() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let outcome = try await onOwnThread { () throws -> BatchOutcome in
            let connection = try testConnection(urls)
            let jetStream = try JetStream(connection: connection)
            let bucket = try jetStream.keyValue(.init(name: "t-batch"))
            let existing = try bucket.create("kept", [1])
            let moved = try bucket.create("moved", [1])
            _ = try bucket.update("moved", [2], revision: moved)
            let results = bucket.updateAll([
                ("fresh", [10], 0),  // a create
                ("kept", [11], existing),  // the revision it rests on
                ("moved", [12], moved),  // a stale revision: another writer moved it
                ("taken", [13], 0),  // a create
            ])
            // A key goes once per batch; a second create of it, in the next batch, finds the first's value.
            let again = bucket.updateAll([("taken", [14], 0)])
            var outcome = BatchOutcome()
            outcome.results = (results + again).map { result in
                switch result {
                case .success: "stored"
                case .failure(let error): error.code.name
                }
            }
            for key in ["fresh", "kept", "moved", "taken"] { outcome.values[key] = try bucket.get(key)?.value }
            let revisions = results.compactMap { try? $0.get() }
            outcome.revisionsMatch = try revisions == [bucket.get("fresh")?.revision, bucket.get("kept")?.revision, bucket.get("taken")?.revision].compactMap { $0 }
            return outcome
        }
        #expect(outcome.results == ["stored", "stored", "conflict", "stored", "conflict"])
        #expect(outcome.values == ["fresh": [10], "kept": [11], "moved": [2], "taken": [13]])
        #expect(outcome.revisionsMatch, "each success reports the revision the bucket holds")
    }

    @Test("a batch's messages nobody acknowledges fail as timeouts beside those stored, and the next batch gets its own answers")
    func aBatchThatTimesOut() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (first, next, kept) = try await onOwnThread { () throws -> ([String], [String], [UInt8]?) in
            let connection = try testConnection(urls)
            defer { connection.close() }
            // No stream holds `t.silent.>`, but a plain subscriber does: a JetStream publish there is delivered
            // and never acknowledged (no "no responders" either), however slow or fast the machine is.
            let silent = try connection.subscribe("t.silent.>")
            try connection.flush(timeoutMs: 5_000)
            // The production default: long enough for a loaded machine's stored messages to be acknowledged.
            let jetStream = try JetStream(connection: connection, waitMs: 5_000)
            let bucket = try jetStream.keyValue(.init(name: "t-hung"))
            _ = try bucket.create("kept", [1])
            let first = jetStream.publishAll([
                ("t.silent.a", [1], .none), (bucket.subject("b"), [2], .none), ("t.silent.c", [3], .none),
            ])
            let delivered = try silent.next(timeoutMs: 5_000)
            let next = bucket.updateAll([("c", [3], 0), ("kept", [9], 0), ("d", [4], 0)])
            let names = { (results: [Result<UInt64, ClusterError>]) in
                results.map { result in
                    switch result {
                    case .success: "stored"
                    case .failure(let error): error.code.name
                    }
                }
            }
            return (names(first) + [delivered?.subject ?? "nothing delivered"], names(next), try bucket.get("kept")?.value)
        }
        #expect(first == ["timeout", "stored", "timeout", "t.silent.a"])
        #expect(next == ["stored", "conflict", "stored"])
        #expect(kept == [1])
    }

    @Test func anOrderedConsumerStartsWhereItIsTold() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (seen, revisions) = try await onOwnThread { () throws -> ([UInt64], [UInt64]) in
            let connection = try testConnection(urls)
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
            return (seen, revisions)
        }
        // History 1 keeps each key's last value: what is left from revision 6 on is each key's last write.
        #expect(seen == [revisions[7], revisions[8], revisions[9]])
    }

    @Test func aBucketWithATimeToLiveForgetsValuesNotWrittenAgain() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (refusedWhileLive, takenAfterExpiry) = try await onOwnThread { () throws -> (Bool, Bool) in
            let connection = try testConnection(urls)
            let jetStream = try JetStream(connection: connection)
            let bucket = try jetStream.keyValue(.init(name: "t-leases", ttlNs: 1_000_000_000))
            try bucket.create("shard.01", Array("a".utf8))
            let refused = (try? bucket.create("shard.01", Array("b".utf8))) == nil
            // The server removes the value once it is older than the bucket's age; then a create succeeds.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if (try? bucket.create("shard.01", Array("b".utf8))) != nil { return (refused, true) }
                usleep(20_000)
            }
            return (refused, false)
        }
        #expect(refusedWhileLive)
        #expect(takenAfterExpiry)
    }
}
