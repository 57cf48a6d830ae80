import CoinWatchStore
import Testing

@Suite("Snapshots")
struct DatabaseSnapshotTests {
    @Test("A snapshot ignores writes made after it was taken")
    func snapshotIsolation() throws {
        try withDatabase { database, _ in
            try database.put(bytes("p/a"), bytes("1"))
            try database.put(bytes("p/c"), bytes("3"))
            try database.withSnapshot { snapshot in
                try database.put(bytes("p/a"), bytes("changed"))
                try database.put(bytes("p/b"), bytes("2"))
                try database.delete(bytes("p/c"))

                #expect(try snapshot.get(bytes("p/a")) == bytes("1"))
                #expect(try snapshot.get(bytes("p/b")) == nil)
                #expect(try snapshot.get(bytes("p/c")) == bytes("3"))
                #expect(try snapshot.scan(prefix: bytes("p/")) == [
                    Database.Entry(key: bytes("p/a"), value: bytes("1")),
                    Database.Entry(key: bytes("p/c"), value: bytes("3")),
                ])
                var visited: [[UInt8]] = []
                try snapshot.forEach(prefix: bytes("p/"), from: bytes("p/b")) { entry in
                    visited.append(entry.key)
                    return .continue
                }
                #expect(visited == [bytes("p/c")])

                // The live database sees the new state meanwhile.
                #expect(try database.scan(prefix: bytes("p/")).map(\.key) == [bytes("p/a"), bytes("p/b")])
                #expect(try database.get(bytes("p/a")) == bytes("changed"))
            }
        }
    }

    @Test("withSnapshot returns the body's result and rethrows its error")
    func resultAndError() throws {
        struct BodyError: Error {}
        try withDatabase { database, _ in
            try database.put(bytes("k"), bytes("v"))
            let value = try database.withSnapshot { snapshot in try snapshot.get(bytes("k")) }
            #expect(value == bytes("v"))
            #expect(throws: BodyError.self) {
                try database.withSnapshot { _ in throw BodyError() }
            }
            // Released snapshots do not prevent further work or closing.
            try database.put(bytes("k"), bytes("w"))
            #expect(try database.get(bytes("k")) == bytes("w"))
        }
    }

    @Test("Snapshots can be nested and each keeps its own view")
    func nestedSnapshots() throws {
        try withDatabase { database, _ in
            try database.put(bytes("k"), bytes("1"))
            try database.withSnapshot { first in
                try database.put(bytes("k"), bytes("2"))
                try database.withSnapshot { second in
                    try database.put(bytes("k"), bytes("3"))
                    #expect(try first.get(bytes("k")) == bytes("1"))
                    #expect(try second.get(bytes("k")) == bytes("2"))
                    #expect(try database.get(bytes("k")) == bytes("3"))
                }
            }
        }
    }
}
