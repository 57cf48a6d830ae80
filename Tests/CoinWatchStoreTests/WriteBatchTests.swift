import CoinWatchStore
import CoinWatchTestSupport
import Synchronization
import Testing
import FoundationEssentials

@Suite("Write batches")
struct WriteBatchTests {
    @Test("A batch records operations in order and can be combined and cleared")
    func recording() {
        var batch = WriteBatch()
        #expect(batch.isEmpty)
        batch.put(bytes("a"), bytes("1"))
        batch.delete(bytes("b"))
        var other = WriteBatch()
        other.put(bytes("c"), [])
        batch.append(contentsOf: other)
        #expect(batch.count == 3)
        #expect(batch.operations == [
            .put(key: bytes("a"), value: bytes("1")), .delete(key: bytes("b")), .put(key: bytes("c"), value: []),
        ])
        batch.removeAll()
        #expect(batch.isEmpty)
    }

    @Test("All of a batch's effects become visible together; later operations on a key win")
    func batchAppliesTogether() throws {
        try withDatabase { database, _ in
            try database.put(bytes("keep"), bytes("old"))
            try database.put(bytes("remove"), bytes("old"))
            var batch = WriteBatch()
            batch.put(bytes("new"), bytes("1"))
            batch.put(bytes("keep"), bytes("first"))
            batch.put(bytes("keep"), bytes("second"))
            batch.delete(bytes("remove"))
            batch.put(bytes("transient"), bytes("x"))
            batch.delete(bytes("transient"))
            batch.put(bytes("empty"), [])

            try database.withSnapshot { before in
                try database.write(batch)
                // The snapshot taken before the write sees none of it ...
                #expect(try before.scan() == [
                    Database.Entry(key: bytes("keep"), value: bytes("old")),
                    Database.Entry(key: bytes("remove"), value: bytes("old")),
                ])
            }
            // ... and the database sees all of it.
            #expect(try database.scan() == [
                Database.Entry(key: bytes("empty"), value: []),
                Database.Entry(key: bytes("keep"), value: bytes("second")),
                Database.Entry(key: bytes("new"), value: bytes("1")),
            ])
        }
    }

    @Test("A batch that is not applied changes nothing, before or after reopening")
    func unappliedBatch() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            try database.put(bytes("k"), bytes("v"))
            var batch = WriteBatch()
            batch.put(bytes("k"), bytes("changed"))
            batch.put(bytes("other"), bytes("1"))
            // Building a batch writes nothing.
            #expect(try database.scan() == [Database.Entry(key: bytes("k"), value: bytes("v"))])
            database.close()
            // Writing it to a closed database fails and writes nothing.
            let error = #expect(throws: StoreError.self) { try database.write(batch) }
            #expect(error?.code == .closed)

            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try reopened.scan() == [Database.Entry(key: bytes("k"), value: bytes("v"))])
            // An empty batch is a no-op.
            try reopened.write(WriteBatch())
            #expect(try reopened.scan().count == 1)
        }
    }

    @Test("Concurrent readers never see half of a batch")
    func concurrentReadersSeeWholeBatches() throws {
        try withDatabase { database, _ in
            var initial = WriteBatch()
            initial.put(bytes("x"), bytes("0"))
            initial.put(bytes("y"), bytes("0"))
            try database.write(initial)

            let failures = Mutex<[String]>([])
            let tornReads = Mutex(0)
            try runOnThreads(3) { worker in
                do {
                    if worker == 0 {
                        for round in 1...300 {
                            var batch = WriteBatch()
                            batch.put(bytes("x"), bytes("\(round)"))
                            batch.put(bytes("y"), bytes("\(round)"))
                            try database.write(batch)
                        }
                    } else {
                        for _ in 1...300 {
                            let entries = try database.scan()
                            if entries.count != 2 || entries[0].value != entries[1].value {
                                tornReads.withLock { $0 += 1 }
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(tornReads.withLock { $0 } == 0)
            #expect(try database.get(bytes("x")) == bytes("300"))
            #expect(try database.get(bytes("y")) == bytes("300"))
        }
    }
}
