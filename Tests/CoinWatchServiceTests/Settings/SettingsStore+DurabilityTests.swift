@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Testing

@Suite("SettingsStore: durability")
struct SettingsStoreDurabilityTests {
    @Test("acknowledged saves and deletes survive a reopen, and memory equals LevelDB")
    func reopenKeepsEverything() async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            var acknowledged: [String: V1.Settings] = [:]
            do {
                let database = try Database(path: path)
                defer { database.close() }
                let store = try SettingsStore(database: database)
                defer { store.close() }
                let results = await withTaskGroup(of: Result<V1.Settings, RPCError>.self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            await store.saveResult(
                                .init(deviceID: "dev-\(index)", setRules: ["BTC": rule(below: String(index + 1))])
                            )
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                for result in results {
                    let settings = try result.get()
                    acknowledged[settings.deviceID] = settings
                }
                let patched = try await store.save(.init(deviceID: "dev-3", setRules: ["ETH": rule(above: "9")]))
                acknowledged["dev-3"] = patched
                #expect(try await store.delete(.init(deviceID: "dev-7")) == true)
                acknowledged["dev-7"] = nil

                #expect(memorySettings(of: store) == acknowledged)
                #expect(try storedSettings(in: database) == acknowledged)
            }

            try withReopenedStore(at: path) { store, database throws in
                #expect(store.deviceCount == 39)
                #expect(memorySettings(of: store) == acknowledged)
                #expect(try storedSettings(in: database) == acknowledged)
                #expect(store.settings(for: try device("dev-3"))?.rules.keys.sorted() == ["BTC", "ETH"])
            }
        }
    }

    @Test("saves go through the settings journal, which checkpoints each time it fills and when the store closes")
    func journalCheckpoints() async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            var options = SettingsStore.Options()
            // A few saves per round of the file, so this test passes several checkpoints.
            options.journalCapacity = 4096
            var acknowledged: [String: V1.Settings] = [:]
            do {
                let database = try Database(path: path)
                defer { database.close() }
                let store = try SettingsStore(database: database, options: options)
                for index in 0..<120 {
                    let settings = try await store.save(
                        .init(deviceID: "dev-\(index % 30)", setRules: ["BTC": rule(below: String(index + 1))])
                    )
                    acknowledged[settings.deviceID] = settings
                    if index == 60 {
                        #expect(try checkpointedBatches(database) > 0, "the 4 KiB journal filled and was checkpointed")
                    }
                }
                store.close()
                #expect(try checkpointedBatches(database) == 120, "closing checkpointed every batch")
            }
            try withReopenedStore(at: path) { store, database throws in
                #expect(memorySettings(of: store) == acknowledged)
                #expect(try storedSettings(in: database) == acknowledged)
            }
        }
    }

    func checkpointedBatches(_ database: Database) throws -> UInt64 {
        let value = try #require(try database.get(StorageLayout.journalCheckpointKey))
        return value.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    @Test("close commits what is queued, then refuses new writes while reads go on")
    func closeDrainsThenRefuses() async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            let database = try Database(path: path)
            let store = try SettingsStore(database: database)
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            store.pauseWriter()
            for index in 0..<10 {
                log.expectOne()
                store.save(.init(deviceID: "dev-\(index)", setRules: ["BTC": rule(below: "1")])) { log.record($0) }
            }
            #expect(store.stats.pendingWrites == 10)
            store.close()
            let results = try log.waitForAll()
            #expect(results.count == 10)
            #expect(results.allSatisfy { (try? $0.get())?.version == 1 })

            let late = await store.saveResult(.init(deviceID: "dev-0"))
            #expect(late.failure == RPCError(code: .unavailable, message: "settings store is shutting down"))
            let lateDelete = await store.deleteResult(.init(deviceID: "dev-0"))
            #expect(lateDelete.failure == RPCError(code: .unavailable, message: "settings store is shutting down"))
            #expect(store.settings(for: try device("dev-0"))?.version == 1)
            store.close()
            // The store does not own the database: it is still open until its owner closes it.
            #expect(!database.isClosed)
            database.close()

            try withReopenedStore(at: path) { store, _ throws in
                #expect(store.deviceCount == 10)
            }
        }
    }

    @Test("close from a completion, on the writer thread, stops intake without waiting for itself")
    func closeFromCompletion() async throws {
        try await withStore { store, _, _ throws in
            let log = CompletionLog<String>()
            log.expectOne()
            store.save(.init(deviceID: "phone-1")) { result in
                store.close()
                log.record("\((try? result.get())?.version ?? 0)")
            }
            #expect(try log.waitForAll() == ["1"])
            let late = await store.saveResult(.init(deviceID: "phone-1"))
            #expect(late.failure == RPCError(code: .unavailable, message: "settings store is shutting down"))
            #expect(store.settings(for: try device("phone-1"))?.version == 1)
        }
    }
}
