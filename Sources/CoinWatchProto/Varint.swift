/// Protobuf's base-128 varint, for the code that sizes or writes wire bytes by hand: the RPC envelopes, the
/// pre-encoded frames of the load tool, price updates written once for many streams, and the stored records
/// read and written without the generated codec. One definition, so all of them agree with the generated
/// decoder, which the tests of each check them against.
public enum Varint {
    /// Bytes `value` takes as a varint (1–10).
    @inlinable
    public static func size(_ value: UInt64) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    /// Writes `value` at `pointer` and advances it; the caller has checked that `size(value)` bytes fit.
    @inlinable
    public static func write(_ value: UInt64, to pointer: inout UnsafeMutableRawPointer) {
        var rest = value
        while rest >= 0x80 {
            pointer.storeBytes(of: UInt8(truncatingIfNeeded: rest) | 0x80, as: UInt8.self)
            pointer += 1
            rest >>= 7
        }
        pointer.storeBytes(of: UInt8(rest), as: UInt8.self)
        pointer += 1
    }

    /// Appends `value` to `bytes`.
    @inlinable
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// `sint64`'s zigzag mapping, which keeps small negative numbers short: 0, -1, 1, -2 … become 0, 1, 2, 3 ….
    @inlinable
    public static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// The inverse of `zigzag(_:)`.
    @inlinable
    public static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
