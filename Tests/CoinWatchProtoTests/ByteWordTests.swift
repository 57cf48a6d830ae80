import CoinWatchModel
import Testing
@testable import CoinWatchProto

/// Each word test's lowest mark is the first byte that passes it, and no mark means no byte does.
struct ByteWordTests {
    /// The lane of the lowest mark, or nil for none.
    static func firstLane(_ marks: UInt64) -> Int? {
        marks == 0 ? nil : marks.trailingZeroBitCount / 8
    }

    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    @Test func theLowestMarkIsTheFirstPassingByte() {
        // Bytes near the edges of each test (0, 1, 0x1F, 0x20, the tested byte and its neighbours, 0x7F, 0x80, 0xFF).
        let interesting: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xFF]
        var random = SeededGenerator(seed: 0xB17E)
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in interesting.randomElement(using: &random)! }
            let word = Self.word(bytes)
            #expect(Self.firstLane(ByteWord.zeros(word)) == bytes.firstIndex(of: 0), "\(bytes)")
            #expect(Self.firstLane(ByteWord.equal(word, 0x22)) == bytes.firstIndex(of: 0x22), "\(bytes)")
            #expect(Self.firstLane(ByteWord.equal(word, 0x5C)) == bytes.firstIndex(of: 0x5C), "\(bytes)")
            #expect(Self.firstLane(ByteWord.below(word, 0x20)) == bytes.firstIndex { $0 < 0x20 }, "\(bytes)")
        }
    }
}
