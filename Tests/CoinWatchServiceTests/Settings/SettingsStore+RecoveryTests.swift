@testable import CoinWatchService
@testable import CoinWatchStore
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// After LevelDB refuses a write (a full disk), the next save reopens the database and succeeds, without a
/// restart, and what was acknowledged before and after is on disk. `stopWrites` records the failure as a failed
/// LevelDB write does; `scripts/fault-tests` produces the real one on a full tmpfs.
@Suite("SettingsStore: recovery after a failed write")
struct SettingsStoreRecoveryTests {
    @Test("the next save after a failed write succeeds, and every acknowledged save survives a reopen")
    func saveAfterFailedWrite() async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            do {
                let database = try Database(path: path)
                defer { database.close() }
                let store = try SettingsStore(database: database)
                defer { store.close() }
                let first = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
                #expect(first.version == 1)

                database.stopWrites(
                    StoreError(code: .ioError, message: "write: IO error: No space left on device", isDiskFull: true))
                #expect(database.writesStopped)
                #expect(store.settings(for: try device("phone-1"))?.version == 1)

                let second = try await store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(above: "2")]))
                #expect(second.version == 2)
                #expect(!database.writesStopped)
                let other = try await store.save(.init(deviceID: "phone-2", setRules: ["SOL": rule(below: "3")]))
                #expect(other.version == 1)
            }
            try withReopenedStore(at: path) { store, _ in
                let phone1 = try #require(store.settings(for: try device("phone-1")))
                #expect(phone1.version == 2)
                #expect(phone1.rules == ["BTC": rule(below: "1"), "ETH": rule(above: "2")])
                #expect(store.settings(for: try device("phone-2"))?.rules == ["SOL": rule(below: "3")])
            }
        }
    }
}
