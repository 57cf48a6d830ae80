/// Eight bytes tested at once, in a 64-bit word: each test marks the bytes that pass it by setting their top bit.
///
/// A mark is exact up to the lowest marked byte: the subtraction can only borrow upwards out of a byte that is
/// marked, so a result of zero means no byte passes, and in a word loaded little-endian the lowest mark
/// (`trailingZeroBitCount / 8`) is the first byte that does.
@usableFromInline
enum ByteWord {
    /// The bytes that are zero: subtracting one borrows into such a byte's top bit, which it did not have before.
    @inlinable @inline(__always)
    static func zeros(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    /// The bytes equal to `byte`.
    @inlinable @inline(__always)
    static func equal(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        zeros(word ^ (0x0101_0101_0101_0101 &* UInt64(byte)))
    }

    /// The bytes below `bound`, which must be at most 0x80 (bytes from 0x80 up are never marked).
    @inlinable @inline(__always)
    static func below(_ word: UInt64, _ bound: UInt8) -> UInt64 {
        (word &- 0x0101_0101_0101_0101 &* UInt64(bound)) & ~word & 0x8080_8080_8080_8080
    }
}
