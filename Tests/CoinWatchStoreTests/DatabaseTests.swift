import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("Database basics")
struct DatabaseTests {
    @Test("Data survives close and reopen")
    func dataSurvivesReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let first = try Database(path: path)
            try first.put(bytes("alpha"), bytes("1"))
            try first.put(bytes("beta"), [0, 1, 0, 255])
            try first.delete(bytes("alpha"))
            try first.put(bytes("gamma"), bytes("3"))
            first.close()

            var options = Database.Options()
            options.createIfMissing = false
            let second = try Database(path: path, options: options)
            defer { second.close() }
            #expect(try second.get(bytes("alpha")) == nil)
            #expect(try second.get(bytes("beta")) == [0, 1, 0, 255])
            #expect(try second.get(bytes("gamma")) == bytes("3"))
        }
    }

    @Test("A missing key is nil; an empty value is []")
    func missingVersusEmpty() throws {
        try withDatabase { database, _ in
            try database.put(bytes("empty"), [])
            #expect(try database.get(bytes("empty")) == [])
            #expect(try database.get(bytes("absent")) == nil)
            try database.delete(bytes("empty"))
            #expect(try database.get(bytes("empty")) == nil)
        }
    }

    @Test("Binary keys and values round-trip, including the empty key and NUL bytes")
    func binarySafety() throws {
        try withDatabase { database, _ in
            let value: [UInt8] = [0, 0, 0xFF, 0x7F, 0x80, 0]
            try database.put([], bytes("empty key"))
            try database.put([0], value)
            try database.put([0, 0], [0])
            #expect(try database.get([]) == bytes("empty key"))
            #expect(try database.get([0]) == value)
            #expect(try database.get([0, 0]) == [0])
            #expect(try database.get([0, 0, 0]) == nil)
        }
    }

    @Test("Overwrite replaces; deleting an absent key succeeds")
    func overwriteAndDelete() throws {
        try withDatabase { database, _ in
            try database.put(bytes("k"), bytes("old"))
            try database.put(bytes("k"), bytes("new"))
            #expect(try database.get(bytes("k")) == bytes("new"))
            try database.delete(bytes("k"))
            try database.delete(bytes("k"))
            try database.delete(bytes("never-written"))
            #expect(try database.get(bytes("k")) == nil)
        }
    }

    @Test("Synchronous writes succeed and persist")
    func syncWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            try database.put(bytes("a"), bytes("1"), sync: true)
            try database.put(bytes("b"), bytes("2"), sync: true)
            try database.delete(bytes("a"), sync: true)
            var batch = WriteBatch()
            batch.put(bytes("c"), bytes("3"))
            try database.write(batch, sync: true)
            database.close()

            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try reopened.scan() == [
                Database.Entry(key: bytes("b"), value: bytes("2")),
                Database.Entry(key: bytes("c"), value: bytes("3")),
            ])
        }
    }

    @Test("Every operation after close throws .closed; closing twice is harmless")
    func operationsAfterClose() throws {
        try withDatabase { database, path in
            try database.put(bytes("k"), bytes("v"))
            database.close()
            database.close()
            #expect(database.isClosed)

            var batch = WriteBatch()
            batch.put(bytes("x"), bytes("y"))
            let operations: [(String, () throws -> Void)] = [
                ("get", { _ = try database.get(bytes("k")) }),
                ("put", { try database.put(bytes("k"), bytes("w")) }),
                ("delete", { try database.delete(bytes("k")) }),
                ("write", { try database.write(batch) }),
                ("scan", { _ = try database.scan() }),
                ("forEach", { try database.forEach { _ in .continue } }),
                ("withSnapshot", { try database.withSnapshot { _ in } }),
                ("property", { _ = try database.property("leveldb.stats") }),
                ("approximateSize", { _ = try database.approximateSize(from: [], to: [0xFF]) }),
                ("compactRange", { try database.compactRange() }),
            ]
            for (name, operation) in operations {
                let error = #expect(throws: StoreError.self, "\(name)") { try operation() }
                #expect(error?.code == .closed, "\(name)")
                #expect(error?.message.contains(path) == true, "\(name)")
            }
        }
    }

    @Test("Opening a missing database without createIfMissing fails with .notFound")
    func missingDatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent").path
            var options = Database.Options()
            options.createIfMissing = false
            let error = #expect(throws: StoreError.self) { try Database(path: path, options: options) }
            #expect(error?.code == .notFound)
            #expect(error?.message.contains("create_if_missing is false") == true)
        }
    }

    @Test("errorIfExists refuses an existing database")
    func errorIfExists() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            try Database(path: path).close()
            var options = Database.Options()
            options.errorIfExists = true
            let error = #expect(throws: StoreError.self) { try Database(path: path, options: options) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("exists") == true)
        }
    }

    static let rejectedOptions: [(String, Database.Options)] = {
        var negativeCache = Database.Options()
        negativeCache.blockCacheSize = -1
        var tinyBuffer = Database.Options()
        tinyBuffer.writeBufferSize = 1024
        var zeroBloom = Database.Options()
        zeroBloom.bloomFilterBitsPerKey = 0
        var fewFiles = Database.Options()
        fewFiles.maxOpenFiles = 10
        return [
            ("blockCacheSize", negativeCache), ("writeBufferSize", tinyBuffer),
            ("bloomFilterBitsPerKey", zeroBloom), ("maxOpenFiles", fewFiles),
        ]
    }()

    @Test("Invalid options are rejected before anything is created", arguments: rejectedOptions)
    func invalidOptions(field: String, options: Database.Options) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let error = #expect(throws: StoreError.self) { try Database(path: path, options: options) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains(field) == true)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("Options without cache or Bloom filter work")
    func minimalOptions() throws {
        var options = Database.Options()
        options.blockCacheSize = 0
        options.bloomFilterBitsPerKey = nil
        try withDatabase(options: options) { database, _ in
            try database.put(bytes("k"), bytes("v"))
            try database.compactRange()
            #expect(try database.get(bytes("k")) == bytes("v"))
            #expect(try database.get(bytes("other")) == nil)
        }
    }

    @Test("Empty paths and paths with NUL bytes are rejected", arguments: ["", "/tmp/a\u{0}b"])
    func invalidPaths(path: String) throws {
        let error = #expect(throws: StoreError.self) { try Database(path: path) }
        #expect(error?.code == .invalidArgument)
        let repairError = #expect(throws: StoreError.self) { try Database.repair(path: path) }
        #expect(repairError?.code == .invalidArgument)
    }

    @Test("property, approximateSize and compactRange report on stored data")
    func maintenance() throws {
        try withDatabase { database, _ in
            var generator = SystemRandomNumberGenerator()
            var batch = WriteBatch()
            for index in 0..<2000 {
                let value = (0..<100).map { _ in UInt8.random(in: 0...255, using: &generator) }
                batch.put(bytes("k\(1_000_000 + index)"), value)
            }
            try database.write(batch)
            try database.compactRange()

            #expect(try database.approximateSize(from: bytes("k"), to: bytes("l")) > 100_000)
            #expect(try database.approximateSize(from: bytes("a"), to: bytes("b")) == 0)
            let stats = try #require(try database.property("leveldb.stats"))
            #expect(stats.contains("Compactions"))
            let sstables = try #require(try database.property("leveldb.sstables"))
            #expect(sstables.contains("k1000000"))
            #expect(try database.property("leveldb.no-such-property") == nil)
            #expect(try database.get(bytes("k1000500"))?.count == 100)
        }
    }

    @Test("destroy removes the database")
    func destroy() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            try database.put(bytes("k"), bytes("v"))
            let inUse = #expect(throws: StoreError.self) { try Database.destroy(path: path) }
            #expect(inUse?.code == .alreadyInUse)
            database.close()

            try Database.destroy(path: path)
            try Database.destroy(path: path)
            var options = Database.Options()
            options.createIfMissing = false
            let error = #expect(throws: StoreError.self) { try Database(path: path, options: options) }
            #expect(error?.code == .notFound)
        }
    }
}
