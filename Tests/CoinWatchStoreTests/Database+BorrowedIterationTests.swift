import CoinWatchStore
import Testing

@Suite("Borrowed prefix iteration")
struct DatabaseBorrowedIterationTests {
    @Test("forEachRaw visits the same entries as scan, in the same order, and stops when asked")
    func sameEntriesAsScan() throws {
        try withDatabase { database, _ in
            let keys: [[UInt8]] = [
                bytes("p:"), bytes("p:a"), bytes("p:") + [0x00], bytes("p:") + [0xFF], bytes("p"), bytes("q:a"),
            ]
            for (index, key) in keys.enumerated() {
                try database.put(key, Array(repeating: UInt8(index), count: index * 100))
            }
            var borrowed: [Database.Entry] = []
            try database.forEachRaw(prefix: bytes("p:")) { key, value in
                borrowed.append(Database.Entry(key: Array(key), value: Array(value)))
                return .continue
            }
            #expect(borrowed == (try database.scan(prefix: bytes("p:"))))
            #expect(borrowed.count == 4)

            var visited = 0
            try database.forEachRaw(prefix: bytes("p:")) { _, _ in
                visited += 1
                return visited == 2 ? .stop : .continue
            }
            #expect(visited == 2)
        }
    }

    @Test("an error thrown by the body comes out unchanged; a closed database is reported")
    func errors() throws {
        struct Marker: Error, Equatable {}
        try withDatabase { database, _ in
            try database.put(bytes("p:a"), [1])
            #expect(throws: Marker()) {
                try database.forEachRaw(prefix: bytes("p:")) { _, _ in throw Marker() }
            }
            database.close()
            #expect {
                try database.forEachRaw(prefix: bytes("p:")) { _, _ in .continue }
            } throws: { error in
                (error as? StoreError)?.code == .closed
            }
        }
    }
}
