@testable import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// The journal is tested by closing it as a crash would (no checkpoint), making the database lose what the journal
/// holds (deleting or overwriting keys behind its back, as a crash can lose LevelDB's unsynced writes) and
/// reopening: what was committed must come back.
@Suite("WriteAheadJournal")
struct WriteAheadJournalTests {
    static let checkpointKey = bytes("meta:journal")

    func journalPath(_ databasePath: String) -> String { databasePath + "/test.journal" }

    func open(_ database: Database, path: String, capacity: Int = 64 * 1024) throws -> WriteAheadJournal {
        try WriteAheadJournal(path: journalPath(path), database: database, checkpointKey: Self.checkpointKey,
                              capacity: capacity)
    }

    func batch(_ pairs: [(String, String?)]) -> WriteBatch {
        var batch = WriteBatch()
        for (key, value) in pairs {
            if let value { batch.put(bytes(key), bytes(value)) } else { batch.delete(bytes(key)) }
        }
        return batch
    }

    func value(_ database: Database, _ key: String) throws -> String? {
        try database.get(bytes(key)).map { String(decoding: $0, as: UTF8.self) }
    }

    func checkpoint(_ database: Database) throws -> UInt64 {
        try WriteAheadJournal.readCheckpoint(database, key: Self.checkpointKey)
    }

    /// Commits `key` = `value` through `journal`, closes it as a crash would, makes the database lose the key and
    /// reopens: the key must come back. Returns the reopened journal, for the caller to close.
    func expectReplayed(
        _ key: String, _ value: String, through journal: WriteAheadJournal, database: Database, path: String
    ) throws -> WriteAheadJournal {
        try journal.commit(batch([(key, value)]))
        journal.close(checkpointing: false)
        try database.delete(bytes(key))
        let reopened = try open(database, path: path)
        #expect(try self.value(database, key) == value)
        return reopened
    }

    @Test("committed batches reach the database and come back at the next open if the database lost them")
    func replayRestoresLostWrites() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            try journal.commit(batch([("a", "1"), ("b", "1")]))
            try journal.commit(batch([("a", "2"), ("c", "1")]))
            try journal.commit(batch([("b", nil)]))
            #expect(try value(database, "a") == "2")
            journal.close(checkpointing: false)

            // Lost: every effect of the three batches.
            try database.delete(bytes("a"))
            try database.put(bytes("b"), bytes("stale"))
            try database.delete(bytes("c"))

            let reopened = try open(database, path: path)
            defer { reopened.close() }
            #expect(try value(database, "a") == "2", "replayed in order: the later value wins")
            #expect(try value(database, "b") == nil, "the delete is replayed too")
            #expect(try value(database, "c") == "1")
            #expect(try checkpoint(database) == 3, "the replay ends with a checkpoint")
        }
    }

    @Test("appended batches get consecutive sequence numbers; one sync covers all of them, and they are replayed")
    func appendThenSync() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            let first = try journal.append(batch([("a", "1")]))
            let second = try journal.append(batch([("b", "1")]))
            let third = try journal.append(batch([("a", "2")]))
            #expect([first, second, third] == [first, first + 1, first + 2])
            // Applied to the database at once (unsynced), before any sync.
            #expect(try value(database, "a") == "2")
            #expect(journal.durableSequence.load(ordering: .relaxed) < third)
            try journal.sync(through: second)
            // The sync covered every record appended before it began, the third included.
            #expect(journal.durableSequence.load(ordering: .relaxed) == third)
            try journal.sync(through: third)
            journal.close(checkpointing: false)

            try database.delete(bytes("a"))
            try database.delete(bytes("b"))
            let reopened = try open(database, path: path)
            #expect(try value(database, "a") == "2")
            #expect(try value(database, "b") == "1")
            reopened.close()
        }
    }

    @Test("a checkpoint makes every appended batch durable without a sync")
    func checkpointCoversAppended() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            let sequence = try journal.append(batch([("a", "1")]))
            try journal.state.withLock { state throws(StoreError) in try journal.checkpoint(&state) }
            #expect(journal.durableSequence.load(ordering: .relaxed) >= sequence)
            #expect(try checkpoint(database) == sequence)
            journal.close()
        }
    }

    @Test("after a checkpoint, an open replays nothing the database already holds durably")
    func checkpointedRecordsAreNotReplayed() throws {
        try withDatabase { database, path in
            let first = try open(database, path: path)
            try first.commit(batch([("a", "1")]))
            first.close(checkpointing: false)
            try database.put(bytes("a"), bytes("lost"))
            // This open replays "a" = 1 and checkpoints it.
            try open(database, path: path).close()
            #expect(try value(database, "a") == "1")

            // A later change made outside the journal is not undone by replaying the checkpointed record again.
            try database.put(bytes("a"), bytes("newer"), sync: true)
            let third = try open(database, path: path)
            defer { third.close() }
            #expect(try value(database, "a") == "newer")
            try third.commit(batch([("b", "1")]))
            #expect(try checkpoint(database) == 1)
        }
    }

    @Test("a clean close checkpoints, so the next open has nothing to replay")
    func cleanCloseCheckpoints() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            try journal.commit(batch([("a", "1")]))
            try journal.commit(batch([("a", "2")]))
            journal.close()
            #expect(try checkpoint(database) == 2)
            try database.put(bytes("a"), bytes("changed"), sync: true)
            let reopened = try open(database, path: path)
            defer { reopened.close() }
            #expect(try value(database, "a") == "changed", "nothing replayed over a later change")
        }
    }

    @Test("a torn record ends the replay: it and everything after it stay out")
    func tornRecordEndsReplay() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            let batches = [batch([("a", "1")]), batch([("b", "1")]), batch([("c", "1")])]
            var sizes: [Int] = []
            for (index, batch) in batches.enumerated() {
                var record: [UInt8] = []
                WriteAheadJournal.encode(batch, sequence: UInt64(index + 1), into: &record)
                sizes.append(record.count)
                try journal.commit(batch)
            }
            journal.close(checkpointing: false)
            for key in ["a", "b", "c"] { try database.delete(bytes(key)) }

            // Flip one payload byte of the second record.
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: journalPath(path)))
            try handle.seek(toOffset: UInt64(sizes[0] + WriteAheadJournal.headerSize + 2))
            let original = try #require(try handle.read(upToCount: 1)).first!
            try handle.seek(toOffset: UInt64(sizes[0] + WriteAheadJournal.headerSize + 2))
            try handle.write(contentsOf: [original ^ 0x40])
            try handle.close()

            let reopened = try open(database, path: path)
            #expect(try value(database, "a") == "1")
            #expect(try value(database, "b") == nil)
            #expect(try value(database, "c") == nil)
            #expect(try checkpoint(database) == 1)
            // Writing goes on after the intact part: the next batch is number 2.
            try expectReplayed("d", "1", through: reopened, database: database, path: path).close()
        }
    }

    @Test("a batch the database refuses is taken back out of the journal and never replayed")
    func refusedBatchIsErased() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path)
            try journal.commit(batch([("a", "1")]))
            // A closed database refuses every write, as a full disk would refuse this one.
            database.close()
            #expect(throws: StoreError.self) { try journal.commit(batch([("refused", "1")])) }
            journal.close(checkpointing: false)

            let reopenedDatabase = try Database(path: path)
            defer { reopenedDatabase.close() }
            try reopenedDatabase.delete(bytes("a"))
            let reopened = try open(reopenedDatabase, path: path)
            #expect(try value(reopenedDatabase, "a") == "1")
            #expect(try value(reopenedDatabase, "refused") == nil)
            // Writing goes on after the refused batch.
            try expectReplayed("b", "1", through: reopened, database: reopenedDatabase, path: path).close()
        }
    }

    @Test("a full journal checkpoints and starts again at its beginning; the older round is never replayed")
    func wrapsAround() throws {
        try withDatabase { database, path in
            let capacity = 4096
            let journal = try open(database, path: path, capacity: capacity)
            var model: [String: String] = [:]
            let filler = String(repeating: "x", count: 300)
            for round in 0..<40 {
                let key = "k\(round % 7)"
                let value = "\(round)-\(filler)"
                try journal.commit(batch([(key, value)]))
                model[key] = value
            }
            let checkpointed = try checkpoint(database)
            #expect(checkpointed > 0, "40 records of 300 bytes do not fit in 4 KiB without a checkpoint")
            journal.close(checkpointing: false)

            // Lose every key: only records after the last checkpoint can come back, and they are exactly the ones
            // the database may have lost; the rest were made durable by the checkpoint, so restore those from the
            // model as the table files would.
            for round in 0..<7 { try database.delete(bytes("k\(round)")) }
            let reopened = try open(database, path: path, capacity: capacity)
            defer { reopened.close() }
            for (key, expected) in model {
                let restored = try value(database, key)
                // Each key was last written in one of the final 7 rounds; whether that round came before or after
                // the checkpoint decides if the journal still has it.
                let lastRound = Int(expected.split(separator: "-")[0])!
                if UInt64(lastRound + 1) > checkpointed {
                    #expect(restored == expected, "\(key) written after the checkpoint comes back")
                } else {
                    #expect(restored == nil, "\(key) was checkpointed; the journal no longer holds it")
                }
            }
        }
    }

    @Test("a batch larger than the whole journal is written to the database with a synced write")
    func oversizedBatch() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path, capacity: 4096)
            defer { journal.close() }
            try journal.commit(batch([("small", "1")]))
            try journal.commit(batch([("big", String(repeating: "y", count: 10_000))]))
            #expect(try value(database, "big")?.count == 10_000)
            #expect(try checkpoint(database) == 1, "the small batch was checkpointed before the big one went past")
            try journal.commit(batch([("after", "1")]))
            #expect(try value(database, "after") == "1")
        }
    }

    @Test("a new journal is its capacity of written zeros; a file cut short is replaced")
    func creation() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path, capacity: 8192)
            journal.close()
            let contents = try Data(contentsOf: URL(fileURLWithPath: journalPath(path)))
            #expect(contents.count == 8192)
            #expect(contents.allSatisfy { $0 == 0 })

            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: journalPath(path)))
            let recreated = try open(database, path: path, capacity: 8192)
            recreated.close()
            let newSize = try FileManager.default.attributesOfItem(atPath: journalPath(path))[.size] as? Int
            #expect(newSize == 8192)
        }
    }

    /// A reserved-but-unwritten block costs every first commit into it an inode write (see `openOrCreate`).
    @Test("a new journal's blocks are written, not reserved as unwritten extents",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/filefrag")))
    func creationWritesBlocks() throws {
        try withDatabase { database, path in
            let journal = try open(database, path: path, capacity: 256 * 1024)
            journal.close()
            let filefrag = try ChildProcess("/usr/sbin/filefrag", ["-v", journalPath(path)])
            let status = try #require(filefrag.wait(timeout: .seconds(30)))
            try #require(status == 0, "filefrag failed: \(filefrag.stderr)")
            #expect(filefrag.stdout.contains("extent"), "\(filefrag.stdout)")
            #expect(!filefrag.stdout.contains("unwritten"), "\(filefrag.stdout)")
        }
    }

    @Test("a damaged checkpoint value is refused as corruption; a closed journal refuses commits")
    func errors() throws {
        try withDatabase { database, path in
            try database.put(Self.checkpointKey, [1, 2, 3])
            let error = #expect(throws: StoreError.self) { try open(database, path: path) }
            #expect(error?.code == .corruption)
            #expect(error?.message.contains("holds 3 bytes") == true, "\(error?.message ?? "")")

            try database.delete(Self.checkpointKey)
            let journal = try open(database, path: path)
            journal.close()
            let closed = #expect(throws: StoreError.self) { try journal.commit(batch([("a", "1")])) }
            #expect(closed?.code == .closed)
        }
    }

    @Test("a journal path that cannot be opened is refused with the call, the path and the reason")
    func unopenablePath() throws {
        try withDatabase { database, path in
            try FileManager.default.createDirectory(atPath: journalPath(path), withIntermediateDirectories: false)
            let error = #expect(throws: StoreError.self) { try open(database, path: path) }
            #expect(error?.code == .ioError)
            #expect(error?.message == "IO error: open \(journalPath(path)): Is a directory")
        }
    }

    @Test("records round-trip through their encoding, and a malformed payload is refused")
    func recordEncoding() {
        let original = batch([("key", "value"), ("gone", nil), ("", "")])
        var record: [UInt8] = []
        WriteAheadJournal.encode(original, sequence: 9, into: &record)
        #expect(WriteAheadJournal.encodedSize(original) == record.count)
        let payload = Array(record[WriteAheadJournal.headerSize...])
        #expect(payload.withUnsafeBytes { WriteAheadJournal.decode(payload: $0) } == original)
        #expect(WriteAheadJournal.load(record, at: 8) as UInt64 == 9)
        #expect([UInt8]([7]).withUnsafeBytes { WriteAheadJournal.decode(payload: $0) } == nil, "unknown kind")
        #expect([UInt8]([1, 9, 0, 0, 0]).withUnsafeBytes { WriteAheadJournal.decode(payload: $0) } == nil, "short key")
        // The standard CRC-32C check value.
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
    }
}
