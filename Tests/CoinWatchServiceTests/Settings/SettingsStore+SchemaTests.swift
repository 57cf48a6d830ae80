@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import Testing

@Suite("SettingsStore: schema and loading")
struct SettingsStoreSchemaTests {
    /// Prepares a database at a fresh path with `setup`, then tries to open a store on it.
    private func open(after setup: (Database) throws -> Void) throws -> (path: String, error: StoreError?) {
        try withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            let database = try Database(path: path)
            defer { database.close() }
            try setup(database)
            do throws(StoreError) {
                let store = try SettingsStore(database: database)
                store.close()
                return (path, nil)
            } catch {
                return (path, error)
            }
        }
    }

    @Test("a new store is marked with schema version 2, and reopens")
    func schemaWrittenOnFirstOpen() async throws {
        try await withStore { store, database, _ in
            #expect(try database.get(Array("meta:schema".utf8)) == Array("2".utf8))
            _ = try await store.save(.init(deviceID: "phone-1"))
        }
        let (_, error) = try open { database in
            try database.put(Array("meta:schema".utf8), Array("2".utf8))
        }
        #expect(error == nil)
    }

    @Test("a store written by a newer schema version is refused")
    func newerSchemaRefused() throws {
        let (path, error) = try open { database in
            try database.put(Array("meta:schema".utf8), Array("3".utf8))
        }
        #expect(
            error == StoreError(
                code: .notSupported,
                message: "store at \(path) has schema version 3, but this build understands versions up to 2; "
                    + "run a newer coinwatchd or restore a backup"
            )
        )
    }

    @Test("an unreadable schema version is reported as corruption")
    func garbageSchema() throws {
        let (path, error) = try open { database in
            try database.put(Array("meta:schema".utf8), Array("v1".utf8))
        }
        #expect(
            error == StoreError(
                code: .corruption, message: "store at \(path): meta:schema holds 'v1', not a schema version"
            )
        )
    }

    @Test("a settings record that does not decode stops the open with its key")
    func undecodableRecord() throws {
        let (path, error) = try open { database in
            try database.put(Array("settings:phone-1".utf8), [0xFF, 0xFF])
        }
        let found = try #require(error)
        #expect(found.code == .corruption)
        #expect(found.message.hasPrefix("store at \(path): record 'settings:phone-1': the value does not decode: "))
    }

    @Test("a record under a non-canonical key, or naming another device, is corruption")
    func inconsistentRecords() throws {
        let value = V1.Settings(deviceID: "phone-2", version: 1).serializedBytes()
        let (path, error) = try open { database in
            try database.put(Array("settings:phone-1".utf8), value)
        }
        #expect(
            error == StoreError(
                code: .corruption,
                message: "store at \(path): record 'settings:phone-1': the value names device 'phone-2'"
            )
        )

        let upper = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        let (upperPath, upperError) = try open { database in
            try database.put(Array("settings:\(upper)".utf8), V1.Settings(deviceID: upper).serializedBytes())
        }
        #expect(
            upperError == StoreError(
                code: .corruption,
                message: "store at \(upperPath): record 'settings:\(upper)': the key is not a canonical device id"
            )
        )
    }

    @Test("keys of other components are left alone")
    func otherPrefixesIgnored() throws {
        let (_, error) = try open { database in
            try database.put(Array("price:BTC".utf8), [1, 2, 3])
            try database.put(Array("alert:phone-1:BTC".utf8), [4])
            try database.put(Array("outbox:0001".utf8), [5])
        }
        #expect(error == nil)
    }
}
