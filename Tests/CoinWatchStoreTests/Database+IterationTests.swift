import CoinWatchStore
import Testing

@Suite("Prefix iteration")
struct DatabaseIterationTests {
    /// Keys chosen to sit on prefix boundaries: a key equal to the prefix, bytes 0x00 and 0xFF right after it,
    /// a prefix that is itself a prefix of other keys, the empty key and keys made only of 0xFF.
    static let keys: [[UInt8]] = [
        bytes("b"), bytes("a") + [0xFF, 0xFF], bytes("abc"), [], bytes("a"), [0xFF, 0x00], bytes("ab"),
        bytes("a") + [0x00], bytes("a") + [0xFF], [0xFF], bytes("`"),
    ]

    /// LevelDB's bytewise order of `keys`, written out as the specification.
    static let bytewiseOrder: [[UInt8]] = [
        [], bytes("`"), bytes("a"), bytes("a") + [0x00], bytes("ab"), bytes("abc"), bytes("a") + [0xFF],
        bytes("a") + [0xFF, 0xFF], bytes("b"), [0xFF], [0xFF, 0x00],
    ]

    private func populate(_ database: Database) throws {
        for (index, key) in Self.keys.enumerated() {
            try database.put(key, [UInt8(index)])
        }
    }

    private func value(of key: [UInt8]) -> [UInt8] {
        [UInt8(Self.keys.firstIndex(of: key)!)]
    }

    @Test("The expected order is the unsigned lexicographic order")
    func orderIsLexicographic() {
        #expect(Self.keys.sorted { $0.lexicographicallyPrecedes($1) } == Self.bytewiseOrder)
    }

    @Test("The empty prefix visits every key in bytewise order, with its value")
    func emptyPrefix() throws {
        try withDatabase { database, _ in
            try populate(database)
            let entries = try database.scan()
            #expect(entries.map(\.key) == Self.bytewiseOrder)
            #expect(entries.allSatisfy { $0.value == value(of: $0.key) })
        }
    }

    @Test(
        "A prefix selects exactly the keys starting with it",
        arguments: [
            (bytes("a"), [bytes("a"), bytes("a") + [0x00], bytes("ab"), bytes("abc"), bytes("a") + [0xFF],
                          bytes("a") + [0xFF, 0xFF]]),
            (bytes("ab"), [bytes("ab"), bytes("abc")]),
            (bytes("abc"), [bytes("abc")]),
            (bytes("abcd"), []),
            (bytes("a") + [0xFF], [bytes("a") + [0xFF], bytes("a") + [0xFF, 0xFF]]),
            ([0xFF], [[0xFF], [0xFF, 0x00]]),
            ([0xFF, 0xFF], []),
            (bytes("c"), []),
        ] as [([UInt8], [[UInt8]])]
    )
    func prefixBoundaries(prefix: [UInt8], expected: [[UInt8]]) throws {
        try withDatabase { database, _ in
            try populate(database)
            #expect(try database.scan(prefix: prefix).map(\.key) == expected)
            var visited: [[UInt8]] = []
            try database.forEach(prefix: prefix) { entry in
                visited.append(entry.key)
                return .continue
            }
            #expect(visited == expected)
        }
    }

    @Test("A start key resumes inside the prefix range and is clamped to it")
    func startKey() throws {
        try withDatabase { database, _ in
            try populate(database)
            let prefix = bytes("a")
            #expect(try database.scan(prefix: prefix, from: bytes("ab")).map(\.key) == [
                bytes("ab"), bytes("abc"), bytes("a") + [0xFF], bytes("a") + [0xFF, 0xFF],
            ])
            // A start between keys begins at the next key.
            #expect(try database.scan(prefix: prefix, from: bytes("abb")).map(\.key) == [
                bytes("abc"), bytes("a") + [0xFF], bytes("a") + [0xFF, 0xFF],
            ])
            // A start before the prefix does not leak keys outside it.
            #expect(try database.scan(prefix: prefix, from: bytes("`")).map(\.key).first == bytes("a"))
            #expect(try database.scan(prefix: prefix, from: []).count == 6)
            // A start after the prefix range yields nothing.
            #expect(try database.scan(prefix: prefix, from: bytes("b")).isEmpty)
        }
    }

    @Test("limit caps a scan; a negative limit is rejected")
    func limit() throws {
        try withDatabase { database, _ in
            try populate(database)
            #expect(try database.scan(prefix: bytes("a"), limit: 2).map(\.key) == [bytes("a"), bytes("a") + [0x00]])
            #expect(try database.scan(limit: 0).isEmpty)
            #expect(try database.scan(limit: 100).count == Self.keys.count)
            let error = #expect(throws: StoreError.self) { try database.scan(limit: -1) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test("forEach stops when the body says so and rethrows the body's error unchanged")
    func forEachControl() throws {
        struct BodyError: Error, Equatable {
            let key: [UInt8]
        }
        try withDatabase { database, _ in
            try populate(database)
            var visited: [[UInt8]] = []
            try database.forEach { entry in
                visited.append(entry.key)
                return visited.count == 3 ? .stop : .continue
            }
            #expect(visited == Array(Self.bytewiseOrder.prefix(3)))

            let error = #expect(throws: BodyError.self) {
                try database.forEach(prefix: bytes("ab")) { entry in
                    throw BodyError(key: entry.key)
                }
            }
            #expect(error == BodyError(key: bytes("ab")))
            // The database is still usable after a body threw.
            #expect(try database.get(bytes("ab")) == value(of: bytes("ab")))
        }
    }

    @Test("Iteration sees the state from when it started, even if the body writes")
    func iterationIsConsistent() throws {
        try withDatabase { database, _ in
            try populate(database)
            var visited: [[UInt8]] = []
            try database.forEach(prefix: bytes("a")) { entry in
                visited.append(entry.key)
                try database.put(bytes("aa"), bytes("written during iteration"))
                try database.delete(bytes("abc"))
                return .continue
            }
            #expect(visited.contains(bytes("abc")))
            #expect(!visited.contains(bytes("aa")))
            #expect(try database.get(bytes("aa")) == bytes("written during iteration"))
            #expect(try database.get(bytes("abc")) == nil)
        }
    }
}
