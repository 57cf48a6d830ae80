/// The 4-byte big-endian length prefix that starts every frame.
public enum FrameEncoder {
    /// Size of the length prefix.
    public static let headerSize = 4

    /// Writes the prefix for a body of `bodyLength` bytes at `destination` (4 bytes).
    @inline(__always)
    public static func writeHeader(bodyLength: Int, to destination: UnsafeMutableRawPointer) {
        precondition(bodyLength >= 0 && bodyLength <= Int(UInt32.max), "frame body length \(bodyLength) out of range")
        destination.storeBytes(of: UInt32(bodyLength).bigEndian, as: UInt32.self)
    }

    /// The prefix for a body of `bodyLength` bytes.
    public static func header(bodyLength: Int) -> [UInt8] {
        precondition(bodyLength >= 0 && bodyLength <= Int(UInt32.max), "frame body length \(bodyLength) out of range")
        let value = UInt32(bodyLength)
        return [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
                UInt8(truncatingIfNeeded: value)]
    }

    /// A complete frame (prefix + body) as one array; convenient for tests and rare paths.
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        header(bodyLength: body.count) + body
    }
}
