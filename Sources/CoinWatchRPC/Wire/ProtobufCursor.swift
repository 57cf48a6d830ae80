/// Bounds-checked reading of protobuf wire primitives over borrowed bytes.
///
/// For code that reads a few fields of a message in place (the envelope fast
/// path, load generators) instead of decoding it whole. Every read returns nil
/// rather than reading past the end.
public struct ProtobufCursor {
    public let bytes: UnsafeRawBufferPointer
    public private(set) var index = 0

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public var isAtEnd: Bool { index == bytes.count }

    public mutating func varint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count, shift < 64 {
            let byte = bytes[index]
            index += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }

    /// A field's number and wire type.
    public mutating func tag() -> (field: Int, wireType: UInt64)? {
        guard let key = varint(), key >> 3 > 0, key >> 3 < 1 << 29 else { return nil }
        return (Int(key >> 3), key & 7)
    }

    /// The bytes of a length-delimited field.
    public mutating func delimited() -> UnsafeRawBufferPointer? {
        guard let length = varint(), length <= UInt64(bytes.count - index) else { return nil }
        let start = index
        index += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
    }
}
