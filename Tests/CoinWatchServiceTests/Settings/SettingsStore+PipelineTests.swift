@testable import CoinWatchService
import CoinWatchProto
@testable import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Glibc
import Synchronization
import Testing

/// A sink over a real database whose syncs wait at a gate the test opens, and can be made to fail: it shows what the
/// writer does while a sync is in flight, which a real disk does not let a test hold still.
final class GatedSink: SettingsBatchSink {
    struct State {
        var appended: UInt64 = 0
        var synced: UInt64 = 0
        var syncCalls = 0
        var open = false
        var failNextSync: StoreError?
        var waitingSyncs = 0
    }

    let database: Database
    let state = Mutex(State())

    init(database: Database) {
        self.database = database
    }

    func append(_ batch: WriteBatch) throws(StoreError) -> UInt64 {
        try database.write(batch, sync: false)
        return state.withLock {
            $0.appended += 1
            return $0.appended
        }
    }

    func sync(through sequence: UInt64) throws(StoreError) {
        state.withLock { $0.waitingSyncs += 1 }
        // Bounded: a test that forgets to open the gate fails instead of hanging.
        for _ in 0..<60_000 {
            if state.withLock({ $0.open }) { break }
            usleep(1000)
        }
        let failure: StoreError? = state.withLock { state in
            state.waitingSyncs -= 1
            state.syncCalls += 1
            defer { state.failNextSync = nil }
            if state.failNextSync == nil { state.synced = max(state.synced, sequence) }
            return state.failNextSync
        }
        if let failure { throw failure }
    }

    func openGate() { state.withLock { $0.open = true } }

    /// Waits (bounded) until `condition` holds of the sink's state.
    func wait(until condition: (State) -> Bool) -> Bool {
        for _ in 0..<60_000 {
            if state.withLock({ condition($0) }) { return true }
            usleep(1000)
        }
        return false
    }
}

@Suite("SettingsStore: pipelined commits")
struct SettingsStorePipelineTests {
    func withGatedStore(_ body: (SettingsStore, GatedSink) async throws -> Void) async throws {
        try await withTemporaryDirectory(prefix: "settings-pipeline") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            let sink = GatedSink(database: database)
            let store = try SettingsStore(database: database, sink: sink, options: .init(), clock: { 1_700_000_000_000 })
            defer {
                sink.openGate()
                store.close()
            }
            try await body(store, sink)
        }
    }

    @Test("the writer appends the next round while the previous round waits for its sync; answers follow the syncs")
    func roundsOverlapTheSync() async throws {
        try await withGatedStore { store, sink in
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            log.expectOne()
            store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")])) { log.record($0) }
            #expect(sink.wait { $0.appended == 1 && $0.waitingSyncs == 1 })
            // Round 2 builds on round 1, which is appended but not durable: its expected_version check sees it.
            log.expectOne()
            store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(above: "2")], precondition: .expectedVersion(1))) {
                log.record($0)
            }
            #expect(sink.wait { $0.appended == 2 }, "the second round was appended while the first sync was in flight")
            #expect(log.arrived.isEmpty, "nothing is answered before its sync")
            #expect(store.settings(for: try device("phone-1")) == nil, "nothing is visible before its sync")

            sink.openGate()
            let results = try log.waitForAll().map { try $0.get() }
            #expect(results.map(\.version) == [1, 2])
            #expect(results.last?.rules.keys.sorted() == ["BTC", "ETH"])
            #expect(store.settings(for: try device("phone-1"))?.version == 2)
            #expect(sink.state.withLock { $0.synced } == 2)
        }
    }

    @Test("a failed sync fails its rounds and the rounds built on them; later saves start from the durable state")
    func failedSyncFailsDependentRounds() async throws {
        try await withGatedStore { store, sink in
            sink.state.withLock { $0.open = true }
            let first = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            #expect(first.version == 1)
            sink.state.withLock { $0.open = false }

            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            log.expectOne()
            store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(below: "2")], precondition: .expectedVersion(1))) {
                log.record($0)
            }
            #expect(sink.wait { $0.appended == 2 && $0.waitingSyncs == 1 })
            log.expectOne()
            store.save(.init(deviceID: "phone-1", setRules: ["SOL": rule(below: "3")], precondition: .expectedVersion(2))) {
                log.record($0)
            }
            #expect(sink.wait { $0.appended == 3 })
            sink.state.withLock {
                $0.failNextSync = StoreError(code: .ioError, message: "IO error: fdatasync journal: Input/output error")
                $0.open = true
            }
            let results = try log.waitForAll()
            for result in results {
                guard case .failure(let error) = result else {
                    Issue.record("a save in or on a failed sync succeeded: \(result)")
                    continue
                }
                #expect(error.code == .unavailable)
            }
            // Memory kept the last durable state; the next save builds on it.
            #expect(store.settings(for: try device("phone-1"))?.version == 1)
            let next = try await store.save(.init(
                deviceID: "phone-1", setRules: ["ADA": rule(below: "4")], precondition: .expectedVersion(1)))
            #expect(next.version == 2)
            #expect(next.rules.keys.sorted() == ["ADA", "BTC"])
        }
    }

    @Test("the rounds handed to the sync thread are bounded by the pending-write limit")
    func inFlightIsBounded() throws {
        try withTemporaryDirectory(prefix: "settings-pipeline") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            let sink = GatedSink(database: database)
            var options = SettingsStore.Options()
            options.maxPendingWrites = 4
            let store = try SettingsStore(database: database, sink: sink, options: options, clock: { 1_700_000_000_000 })
            defer {
                sink.openGate()
                store.close()
            }
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            // One save per round: each waits until the writer has taken the previous one.
            for index in 0..<4 {
                log.expectOne()
                store.save(.init(deviceID: "dev-\(index)", setRules: ["BTC": rule(below: "1")])) { log.record($0) }
                #expect(sink.wait { $0.appended == UInt64(index + 1) })
            }
            // Four requests are in flight: the writer takes the next round, appends it and waits for room to hand
            // it over; what is submitted then stays queued until the sync thread answers some.
            log.expectOne()
            store.save(.init(deviceID: "dev-4", setRules: ["BTC": rule(below: "1")])) { log.record($0) }
            #expect(sink.wait { _ in store.writer.commits.isWriterWaiting })
            #expect(sink.state.withLock { $0.appended } == 5)
            log.expectOne()
            store.save(.init(deviceID: "dev-5", setRules: ["BTC": rule(below: "1")])) { log.record($0) }
            #expect(store.stats.pendingWrites == 1)
            #expect(sink.state.withLock { $0.appended } == 5)
            sink.openGate()
            let results = try log.waitForAll()
            #expect(results.allSatisfy { (try? $0.get())?.version == 1 })
        }
    }

    @Test("with yieldsToEventLoops the writer and sync threads are batch-scheduled, without it they are not")
    func batchScheduledThreads() async throws {
        for yields in [true, false] {
            try await withTemporaryDirectory(prefix: "settings-batch") { directory in
                let database = try Database(path: databasePath(in: directory))
                defer { database.close() }
                let sink = PolicyRecordingSink(database: database)
                var options = SettingsStore.Options()
                options.yieldsToEventLoops = yields
                let store = try SettingsStore(database: database, sink: sink, options: options, clock: { 1_700_000_000_000 })
                defer { store.close() }
                var request = V1.SaveSettingsRequest(deviceID: "batch-policy")
                request.setRules["BTC"] = rule(below: "1")
                #expect(try await store.saveResult(request).get().version == 1)
                #expect(sink.seen.withLock { $0 } == Seen(append: yields, sync: yields))
            }
        }
    }

    struct Seen: Equatable {
        var append: Bool?
        var sync: Bool?
    }

    /// A sink that notes whether the threads calling it (the writer appends, the sync thread syncs) are
    /// batch-scheduled.
    final class PolicyRecordingSink: SettingsBatchSink {
        let database: Database
        let seen = Mutex(Seen())

        init(database: Database) {
            self.database = database
        }

        func append(_ batch: WriteBatch) throws(StoreError) -> UInt64 {
            seen.withLock { $0.append = NamedThread.currentIsBatchScheduled }
            try database.write(batch, sync: true)
            return 1
        }

        func sync(through sequence: UInt64) throws(StoreError) {
            seen.withLock { $0.sync = NamedThread.currentIsBatchScheduled }
        }
    }
}
