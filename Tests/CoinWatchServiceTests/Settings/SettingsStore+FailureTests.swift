@testable import CoinWatchService
import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Testing
import Synchronization

private func describe(_ error: RPCError?) -> String {
    error.map(String.init(describing:)) ?? "success"
}

@Suite("SettingsStore: write failures")
struct SettingsStoreFailureTests {
    @Test("options out of range are refused at open with a message naming the option", arguments: [
        (0, 4096, "maxPendingWrites must be positive (got 0)"),
        (16, 1000, "journalCapacity must be at least 4096 bytes (got 1000)"),
    ])
    func badOptions(maxPendingWrites: Int, journalCapacity: Int, message: String) throws {
        try withTemporaryDirectory(prefix: "settings-test") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            var options = SettingsStore.Options()
            options.maxPendingWrites = maxPendingWrites
            options.journalCapacity = journalCapacity
            let error = #expect(throws: StoreError.self) { try SettingsStore(database: database, options: options) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == message)
        }
    }

    @Test("a refused batch fails every request in it and leaves memory as it was")
    func failedBatchChangesNothing() async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            let database = try Database(path: path)
            defer { database.close() }
            let sink = FailingSink(database: database)
            let store = try SettingsStore(
                database: database, sink: sink, options: .init(), clock: WallClock.milliseconds
            )
            defer { store.close() }

            let committed = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))

            let diskFull = "write \(path): IO error: \(path)/000003.log: No space left on device"
            sink.failure.withLock { $0 = StoreError(code: .ioError, message: diskFull, isDiskFull: true) }
            let log = CompletionLog<String>()
            store.pauseWriter()
            log.expectOne()
            store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(below: "2")])) {
                log.record("save phone-1: \(describe($0.failure))")
            }
            log.expectOne()
            store.save(.init(deviceID: "phone-2", setRules: ["ETH": rule(below: "2")])) {
                log.record("save phone-2: \(describe($0.failure))")
            }
            log.expectOne()
            store.delete(.init(deviceID: "phone-1")) {
                log.record("delete phone-1: \(describe($0.failure))")
            }
            store.resumeWriter()
            let expected = RPCError(code: .resourceExhausted, message: "store write failed: \(diskFull)")
            #expect(
                try log.waitForAll() == [
                    "save phone-1: \(String(describing: expected))",
                    "save phone-2: \(String(describing: expected))",
                    "delete phone-1: \(String(describing: expected))",
                ]
            )
            // Reads still work and see only what was acknowledged.
            #expect(store.settings(for: try device("phone-1")) == committed)
            #expect(store.settings(for: try device("phone-2")) == nil)
            #expect(store.getSettings(.init(deviceID: "phone-1")) == .success(committed))
            var stats = store.stats
            #expect(stats.batchesFailed == 1)
            #expect(stats.lastWriteError == diskFull)

            let ioError = "write \(path): IO error: \(path)/000003.log: Input/output error"
            sink.failure.withLock { $0 = StoreError(code: .ioError, message: ioError) }
            let broken = await store.saveResult(.init(deviceID: "phone-1"))
            #expect(broken.failure == RPCError(code: .unavailable, message: "store write failed: \(ioError)"))

            sink.failure.withLock { $0 = nil }
            let recovered = try await store.save(.init(deviceID: "phone-1", setRules: ["SOL": rule(above: "3")]))
            #expect(recovered.version == 2)
            #expect(recovered.rules.keys.sorted() == ["BTC", "SOL"])
            stats = store.stats
            #expect(stats.batchesFailed == 2)
            #expect(stats.writesFailed == 4)
            #expect(try storedSettings(in: database) == ["phone-1": recovered])
        }
    }

    @Test("a closed database fails writes with UNAVAILABLE while reads keep working")
    func closedDatabase() async throws {
        try await withStore { store, database, path in
            let committed = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            database.close()

            let result = await store.saveResult(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "2")]))
            #expect(
                result.failure == RPCError(
                    code: .unavailable, message: "store write failed: database at \(path) is closed"
                )
            )
            let deleted = await store.deleteResult(.init(deviceID: "phone-1"))
            #expect(deleted.failure?.code == .unavailable)
            #expect(store.settings(for: try device("phone-1")) == committed)
            #expect(store.allSettings() == [committed])
        }
    }
}
