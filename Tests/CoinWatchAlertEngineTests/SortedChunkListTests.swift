import CoinWatchModel
@testable import CoinWatchAlertEngine
import Testing

@Suite("SortedChunkList")
struct SortedChunkListTests {
    /// Random inserts, removals, bulk inserts and prefix/suffix pops against a plain sorted array,
    /// with tiny chunks so splits and merges happen constantly.
    @Test("behaves like a sorted array", arguments: [(1, 2), (2, 4), (3, 8), (4, 64)] as [(UInt64, Int)])
    func matchesSortedArray(seed: UInt64, chunkSize: Int) throws {
        var random = SplitMix64(seed: seed)
        var list = SortedChunkList(chunkSize: chunkSize)
        var model: [IndexEntry] = []
        func entry() -> IndexEntry {
            IndexEntry(key: Int128(Int64(random.next() % 200) - 100), device: UInt32(random.next() % 8))
        }
        for step in 0..<2_000 {
            switch random.next() % 10 {
            case 0..<4:
                let value = entry()
                let inserted = list.insert(value)
                #expect(inserted == !model.contains(value))
                if inserted { model.append(value) }
            case 4..<6:
                let value = random.next() % 3 == 0 || model.isEmpty
                    ? entry() : model[Int(random.next() % UInt64(model.count))]
                let removed = list.remove(value)
                #expect(removed == model.contains(value))
                model.removeAll { $0 == value }
            case 6:
                let key = Int128(Int64(random.next() % 220) - 110)
                var popped: [IndexEntry] = []
                list.popPrefix(through: key, into: &popped)
                #expect(popped == model.sorted().filter { $0.key <= key })
                model.removeAll { $0.key <= key }
            case 7:
                let key = Int128(Int64(random.next() % 220) - 110)
                var popped: [IndexEntry] = []
                list.popSuffix(from: key, into: &popped)
                #expect(popped == model.sorted().filter { $0.key >= key })
                model.removeAll { $0.key >= key }
            default:
                // A bulk insert, sometimes large enough to take the whole-list merge, and including
                // entries already present (which are skipped).
                let count = Int(random.next() % 150)
                let batch = Set((0..<count).map { _ in entry() }).sorted()
                list.insert(contentsOfSorted: batch)
                model.append(contentsOf: Set(batch).subtracting(model))
            }
            try #require(list.isValid(), "step \(step)")
            try #require(list.elements == model.sorted(), "step \(step)")
            try #require(list.count == model.count)
        }
    }

    @Test("radix sorting by key matches the comparison sort", arguments: [1, 2, 3] as [UInt64])
    func radixSort(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for round in 0..<20 {
            // Keys from a few small values (many ties), from the whole signed range, or near one price.
            let count = Int(random.next() % 3_000)
            var entries = (0..<count).map { device -> IndexEntry in
                let key: Int128
                switch round % 3 {
                case 0: key = Int128(Int64(random.next() % 7) - 3)
                case 1: key = Int128(Int64(bitPattern: random.next())) << 63 | Int128(random.next() >> 1)
                default: key = (Int128(6_425_050) + Int128(random.next() % 1_000)) * 10_000_000_000_000_000
                }
                return IndexEntry(key: key, device: UInt32(device))
            }
            let expected = entries.sorted()
            IndexEntry.radixSortByKey(&entries)
            #expect(entries == expected)
        }
    }

    @Test("bulk build splits into chunks and keeps every entry")
    func bulkBuild() {
        let entries = (0..<1_000).map { IndexEntry(key: Int128($0 / 3), device: UInt32($0 % 3)) }
        let list = SortedChunkList(sorted: entries, chunkSize: 16)
        #expect(list.isValid())
        #expect(list.elements == entries)
        #expect(list.chunks.count == 63)
    }

    @Test("entries order by key, then device")
    func ordering() {
        #expect(IndexEntry(key: 1, device: 9) < IndexEntry(key: 2, device: 0))
        #expect(IndexEntry(key: 2, device: 0) < IndexEntry(key: 2, device: 1))
        #expect(!(IndexEntry(key: 2, device: 1) < IndexEntry(key: 2, device: 1)))
    }
}
