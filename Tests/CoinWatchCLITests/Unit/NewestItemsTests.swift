@testable import CoinWatchCLI
import Testing

@Suite("the newest items a follower keeps")
struct NewestItemsTests {
    @Test("a reader that falls behind gets the newest items, oldest first, however far behind it fell")
    func keepsTheNewest() {
        var items = NewestItems<Int>(limit: 3)
        let first = items.append(1)
        let second = items.append(2)
        #expect(first && !second)
        let drained1 = items.drain()
        #expect(drained1 == [1, 2])
        let drained2 = items.drain()
        #expect(drained2 == [])
        for value in 1...10 { _ = items.append(value) }
        #expect(items.count == 3)
        let drained3 = items.drain()
        #expect(drained3 == [8, 9, 10])
        // Far behind: many times the limit, across the points where dropped items are cut off.
        for value in 1...1_000 { _ = items.append(value) }
        let drained4 = items.drain()
        #expect(drained4 == [998, 999, 1_000])
        let alone = items.append(7)
        #expect(alone)
        let drained5 = items.drain()
        #expect(drained5 == [7])
    }

    @Test("a limit of one keeps the latest item")
    func limitOfOne() {
        var items = NewestItems<String>(limit: 1)
        for text in ["a", "b", "c"] { _ = items.append(text) }
        let drained6 = items.drain()
        #expect(drained6 == ["c"])
    }
}
