@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Synchronization
import Testing

@Suite("SettingsStore: group commit")
struct SettingsStoreGroupCommitTests {
    @Test("saves queued from many threads while the writer is busy go out in one batch")
    func burstIsOneBatch() async throws {
        try await withStore { store, database, _ in
            let before = store.stats
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            store.pauseWriter()
            for _ in 0..<200 {
                log.expectOne()
            }
            try runOnThreads(8) { thread in
                for index in 0..<25 {
                    store.save(.init(deviceID: "dev-\(thread)-\(index)", setRules: ["BTC": rule(below: "1")])) {
                        log.record($0)
                    }
                }
            }
            #expect(store.stats.pendingWrites == 200)
            store.resumeWriter()
            let results = try log.waitForAll()

            #expect(results.count == 200)
            #expect(results.allSatisfy { (try? $0.get())?.version == 1 })
            let after = store.stats
            #expect(after.batchesWritten - before.batchesWritten == 1)
            #expect(after.writesCommitted - before.writesCommitted == 200)
            #expect(after.largestBatch == 200)
            #expect(after.requestsPerBatch.last == 1)
            #expect(after.requestsPerBatch.count == 8)  // 200 is in [128, 256), bucket 7
            #expect(after.pendingWrites == 0)
            #expect(try storedSettings(in: database).count == 200)
        }
    }

    @Test("saves an event loop queues in one round wake the writer once, when the round ends, and go out in one batch")
    func loopRoundIsOneBatch() async throws {
        try await withStore { store, _, _ in
            let loop = try EventLoop(name: "test-saves")
            // From a sleeping writer: the first save of the round is the one that owes it a wake.
            #expect(await eventually { store.queue.isWriterAsleep })
            let before = store.stats
            let log = CompletionLog<Result<SavedSettings, RPCError>>()
            let commands = try (0..<50).map { index in
                try SaveCommand(validating: .init(deviceID: "phone-\(index)", setRules: ["BTC": rule(below: "1")]))
            }
            for _ in commands { log.expectOne() }
            let queued = DispatchSemaphore(value: 0)
            let wokenEarly = Mutex(false)
            loop.execute {
                for (index, command) in commands.enumerated() {
                    store.submitSave(command, from: loop) { log.record($0) }
                    // The writer takes nothing while the round goes on: it is woken only when the loop is done.
                    if store.queue.count != index + 1 { wokenEarly.withLock { $0 = true } }
                }
                queued.signal()
            }
            #expect(queued.wait(timeout: .now() + 60) == .success)
            let results = try log.waitForAll()
            #expect(results.allSatisfy { (try? $0.get())?.settings.version == 1 })
            #expect(store.stats.batchesWritten - before.batchesWritten == 1)
            #expect(store.stats.largestBatch == commands.count)
            #expect(!wokenEarly.withLock { $0 })
            await loop.shutdownGracefully()
        }
    }

    @Test("each save's encoded answer is its own state, also when one batch saves a device twice")
    func encodedAnswersPerSave() async throws {
        try await withStore { store, _, _ in
            let log = CompletionLog<Result<SavedSettings, RPCError>>()
            store.pauseWriter()
            for (device, below) in [("phone-1", "1"), ("phone-2", "5"), ("phone-1", "2")] {
                log.expectOne()
                store.submitSave(try SaveCommand(validating: .init(deviceID: device, setRules: ["BTC": rule(below: below)]))) { log.record($0) }
            }
            store.resumeWriter()
            let saved = try log.waitForAll().map { try $0.get() }
            #expect(saved.map { "\($0.settings.deviceID) v\($0.settings.version)" } == ["phone-1 v1", "phone-2 v1", "phone-1 v2"])
            for answer in saved {
                let decoded = try V1.SaveSettingsResponse(serializedBytes: answer.encodedResponse)
                #expect(decoded.settings == answer.settings, "the bytes carry this save's state, not the round's last")
            }
        }
    }

    @Test("a device saved, deleted and saved again in one batch: each save is answered with its own state")
    func encodedAnswersAcrossADelete() async throws {
        try await withStore { store, _, _ in
            let saves = CompletionLog<Result<SavedSettings, RPCError>>()
            let deletes = CompletionLog<Result<Bool, RPCError>>()
            store.pauseWriter()
            saves.expectOne()
            store.submitSave(try SaveCommand(validating: .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))) { saves.record($0) }
            deletes.expectOne()
            store.delete(.init(deviceID: "phone-1")) { deletes.record($0) }
            saves.expectOne()
            store.submitSave(try SaveCommand(validating: .init(deviceID: "phone-1", setRules: ["ETH": rule(below: "2")]))) { saves.record($0) }
            store.resumeWriter()
            let saved = try saves.waitForAll().map { try $0.get() }
            #expect(try deletes.waitForAll().map { try $0.get() } == [true])
            // Both are version 1 (the second is a first save again), with different rules.
            #expect(saved.map { $0.settings.version } == [1, 1])
            #expect(saved.map { $0.settings.rules.keys.sorted() } == [["BTC"], ["ETH"]])
            for answer in saved {
                #expect(try V1.SaveSettingsResponse(serializedBytes: answer.encodedResponse).settings == answer.settings)
            }
        }
    }

    @Test("requests for one device in one batch apply in submission order")
    func sameDeviceInOneBatchIsLinearizable() async throws {
        try await withStore { store, _, _ in
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            store.pauseWriter()
            for index in 1...100 {
                log.expectOne()
                let request = V1.SaveSettingsRequest(
                    deviceID: "phone-1",
                    setRules: ["BTC": rule(below: String(index))],
                    precondition: .expectedVersion(UInt64(index - 1))
                )
                store.save(request) { log.record($0) }
            }
            log.expectOne()
            store.save(.init(deviceID: "phone-1", precondition: .expectedVersion(0))) { log.record($0) }
            store.resumeWriter()
            let results = try log.waitForAll()

            #expect(results.prefix(100).map { (try? $0.get())?.version } == (1...100).map { UInt64($0) })
            #expect(
                results.last?.failure
                    == RPCError(code: .aborted, message: "expected version 0 but device 'phone-1' is at version 100")
            )
            #expect(store.settings(for: try device("phone-1"))?.rules == ["BTC": rule(below: "100")])
            #expect(store.stats.batchesWritten == 1)
        }
    }

    @Test("a queue past its limit refuses with RESOURCE_EXHAUSTED at once")
    func queueLimit() async throws {
        try withTemporaryDirectory(prefix: "settings-test") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            var options = SettingsStore.Options()
            options.maxPendingWrites = 3
            let store = try SettingsStore(database: database, options: options)
            defer { store.close() }
            let log = CompletionLog<Result<V1.Settings, RPCError>>()
            store.pauseWriter()
            for index in 0..<4 {
                log.expectOne()
                store.save(.init(deviceID: "dev-\(index)")) { log.record($0) }
            }
            // The refusal was answered on this thread before `save` returned; the other three wait in the queue.
            #expect(
                log.arrived.map(\.failure) == [
                    RPCError(
                        code: .resourceExhausted, message: "settings writer already has 3 writes pending; retry later"
                    ),
                ]
            )
            store.resumeWriter()
            let results = try log.waitForAll()
            #expect(results.count == 4)
            #expect(results.dropFirst().allSatisfy { (try? $0.get())?.version == 1 })
        }
    }
}
