import Testing
@testable import CoinWatchHTTP

/// The streams of a connection by id: the stream kept at hand from the last lookup never outlives its entry.
@Suite struct HTTP2StreamTableTests {
    @Test("lookups find what was inserted, and nothing once it is removed or replaced")
    func lookups() {
        var table = HTTP2StreamTable()
        let one = HTTP2Stream(id: 1)
        let three = HTTP2Stream(id: 3)
        table[1] = one
        table[3] = three
        #expect(table[1] === one)
        #expect(table[3] === three)
        #expect(table[1] === one)
        #expect(table[5] == nil)
        #expect(table.values.count == 2)

        // The last stream looked up is the one removed: a lookup after it must not find it.
        #expect(table[3] === three)
        #expect(table.removeValue(forKey: 3) === three)
        #expect(table[3] == nil)
        #expect(table.removeValue(forKey: 3) == nil)

        // Set to nil while it is the one at hand.
        #expect(table[1] === one)
        table[1] = nil
        #expect(table[1] == nil)
        #expect(table.isEmpty)

        // Replaced while it is the one at hand.
        table[7] = HTTP2Stream(id: 7)
        let replacement = HTTP2Stream(id: 7)
        table[7] = replacement
        #expect(table[7] === replacement)

        // Removing another stream keeps the one at hand.
        table[9] = HTTP2Stream(id: 9)
        #expect(table[7] === replacement)
        #expect(table.removeValue(forKey: 9) != nil)
        #expect(table[7] === replacement)
        #expect(table.values.map(\.id) == [7])
    }

    @Test("removing everything forgets the stream at hand too")
    func removeAll() {
        var table = HTTP2StreamTable()
        table[1] = HTTP2Stream(id: 1)
        #expect(table[1] != nil)
        table.removeAll()
        #expect(table[1] == nil)
        #expect(table.isEmpty)
    }
}
