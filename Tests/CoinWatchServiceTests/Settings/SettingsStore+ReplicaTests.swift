@testable import CoinWatchService
import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Synchronization
import Testing

/// A cluster's store of record in memory: every write is stored, at the next revision.
private final class StoringReplicator: SettingsReplicator {
    private let state = Mutex<(revision: UInt64, records: [String: (record: [UInt8]?, revision: UInt64)])>((0, [:]))

    var records: [String: [UInt8]?] {
        state.withLock { state in state.records.mapValues(\.record) }
    }

    func replicate(_ writes: [SettingsReplicaWrite]) -> [SettingsReplicaOutcome] {
        state.withLock { state in
            writes.map { write in
                state.revision += 1
                state.records[write.device.rawValue] = (write.record, state.revision)
                return .stored
            }
        }
    }

    func refresh(_ device: DeviceID) -> SettingsReplicaRefresh { .current }

    func accept(_ device: DeviceID, revision: UInt64) -> Bool { true }
}

@Suite("SettingsStore: cluster mode's local copy")
struct SettingsStoreReplicaTests {
    /// A store in cluster mode over a sink that fails on demand.
    private func withClusterStore(
        _ body: (SettingsStore, FailingSink, StoringReplicator) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory(prefix: "settings-replica") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            let sink = FailingSink(database: database)
            let store = try SettingsStore(database: database, sink: sink, options: .init(), clock: WallClock.milliseconds)
            defer { store.close() }
            let replicator = StoringReplicator()
            store.replicate(through: replicator)
            try await body(store, sink, replicator)
        }
    }

    private static let diskFull = StoreError(code: .ioError, message: "No space left on device", isDiskFull: true)

    @Test("a save the cluster stored is answered and served although the local journal refuses it")
    func refusedAppend() async throws {
        try await withClusterStore { store, sink, replicator in
            sink.failure.withLock { $0 = Self.diskFull }
            let saved = try await store.saveResult(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")])).get()
            #expect(saved.version == 1)
            #expect(memorySettings(of: store)["phone-1"] == saved)
            #expect(replicator.records["phone-1"] == .some(saved.serializedBytes()))
            #expect(store.stats.batchesFailed == 1)
            #expect(store.stats.lastWriteError == "No space left on device")

            // The next round builds on it, whether or not the journal works again.
            let next = try await store.saveResult(.init(deviceID: "phone-1", setRules: ["ETH": rule(above: "2")], precondition: .expectedVersion(1))).get()
            #expect(next.version == 2)
            #expect(next.rules.keys.sorted() == ["BTC", "ETH"])
            sink.failure.withLock { $0 = nil }
            let third = try await store.saveResult(.init(deviceID: "phone-1", removeSymbols: ["BTC"], precondition: .expectedVersion(2))).get()
            #expect(third.version == 3)
            #expect(memorySettings(of: store)["phone-1"] == third)
        }
    }

    @Test("another node's value is applied although the local journal refuses the round")
    func refusedReplicatedValue() async throws {
        try await withClusterStore { store, sink, _ in
            sink.failure.withLock { $0 = Self.diskFull }
            var elsewhere = V1.Settings()
            elsewhere.deviceID = "phone-2"
            elsewhere.rules = ["BTC": rule(above: "100")]
            elsewhere.version = 4
            store.applyReplicated(try device("phone-2"), elsewhere, revision: 9)
            // Rounds are answered in order: once a later save is answered, the value's round is published.
            _ = try await store.saveResult(.init(deviceID: "phone-3", setRules: ["ETH": rule(below: "1")])).get()
            #expect(memorySettings(of: store)["phone-2"] == elsewhere)
            #expect(store.stats.batchesFailed >= 1)  // one round or two, as the writer found them
        }
    }

    @Test("a failed local sync does not fail the rounds the cluster stored, nor those after them")
    func failedSync() async throws {
        try await withClusterStore { store, sink, _ in
            sink.syncFailure.withLock { $0 = StoreError(code: .ioError, message: "Input/output error") }
            let first = await store.saveResult(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            let second = await store.saveResult(.init(deviceID: "phone-1", setRules: ["ETH": rule(below: "2")], precondition: .expectedVersion(1)))
            #expect(first.failure == nil)
            let secondSaved = try second.get()
            #expect(secondSaved.version == 2)
            #expect(memorySettings(of: store)["phone-1"]?.rules.keys.sorted() == ["BTC", "ETH"])
            #expect(store.stats.batchesFailed == 2)
            #expect(store.stats.lastWriteError == "Input/output error")
        }
    }
}
