@testable import CoinWatchRPC
import Testing

@Suite("ByteArena")
struct ByteArenaTests {
    @Test("appended and reserved bytes read back at their offsets, also after the arena grew")
    func offsetsSurviveGrowth() {
        var arena = ByteArena(minimumCapacity: 8, retainedCapacity: 64)
        defer { arena.deallocate() }
        let first = [UInt8](1...6).withUnsafeBytes { arena.append($0) }
        let reserved = arena.reserve(5)
        for index in 0..<3 {
            arena.mutablePointer(at: reserved + index).storeBytes(of: UInt8(100 + index), as: UInt8.self)
        }
        arena.commit(3)
        // Past the first 8 bytes: the arena moves its bytes to a larger block.
        let third = [UInt8](repeating: 7, count: 20).withUnsafeBytes { arena.append($0) }

        #expect(first == 0 && reserved == 6 && third == 9)
        #expect(arena.count == 29)
        #expect(Array(UnsafeRawBufferPointer(start: arena.pointer(at: first), count: 6)) == [1, 2, 3, 4, 5, 6])
        #expect(Array(UnsafeRawBufferPointer(start: arena.pointer(at: reserved), count: 3)) == [100, 101, 102])
        #expect(Array(UnsafeRawBufferPointer(start: arena.pointer(at: third), count: 20)) == Array(repeating: 7, count: 20))
    }

    @Test("reset keeps the memory up to the retained capacity and releases a burst beyond it")
    func resetRetainsOrReleases() {
        var arena = ByteArena(minimumCapacity: 16, retainedCapacity: 32)
        defer { arena.deallocate() }
        _ = [UInt8](repeating: 1, count: 20).withUnsafeBytes { arena.append($0) }
        let kept = arena.baseAddress
        arena.reset()
        #expect(arena.count == 0)
        #expect(arena.baseAddress == kept, "32 bytes are within the retained capacity")

        _ = [UInt8](repeating: 2, count: 100).withUnsafeBytes { arena.append($0) }
        arena.reset()
        #expect(arena.baseAddress == nil, "a 128-byte burst is released")
        #expect(arena.reserve(4) == 0)
    }
}
