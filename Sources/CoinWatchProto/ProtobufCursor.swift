/// Bounds-checked reading of protobuf wire primitives over borrowed bytes.
///
/// For code that reads a message in place instead of decoding it whole: the envelope fast path, the load
/// generator, the stored-record readers at start-up (which also read their own non-protobuf record format with
/// it). Every read returns nil (or false) rather than reading past the end; `index` then says how far it got.
public struct ProtobufCursor {
    public let bytes: UnsafeRawBufferPointer
    @usableFromInline var position = 0

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// How many bytes have been read.
    @inlinable public var index: Int { position }

    @inlinable public var isAtEnd: Bool { position == bytes.count }

    /// A varint of at most 10 bytes whose value fits in 64 bits.
    @inlinable
    public mutating func varint() -> UInt64? {
        readVarint(minimal: false)
    }

    /// As `varint()`, but only in its shortest encoding, the one encoders write: for readers that accept a single
    /// canonical form of a message.
    @inlinable
    public mutating func minimalVarint() -> UInt64? {
        readVarint(minimal: true)
    }

    /// A field's number and wire type.
    @inlinable
    public mutating func tag() -> (field: Int, wireType: UInt64)? {
        guard let key = varint(), key >> 3 > 0, key >> 3 < 1 << 29 else { return nil }
        return (Int(key >> 3), key & 7)
    }

    /// Consumes `byte` if it is next: a one-byte tag where exactly one field may follow.
    @inlinable
    public mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// The bytes of a length-delimited field.
    @inlinable
    public mutating func delimited() -> UnsafeRawBufferPointer? {
        guard let length = varint() else { return nil }
        return self.bytes(length)
    }

    /// As `delimited()`, with the length in its shortest encoding.
    @inlinable
    public mutating func minimalDelimited() -> UnsafeRawBufferPointer? {
        guard let length = minimalVarint() else { return nil }
        return self.bytes(length)
    }

    /// The next byte.
    @inlinable
    public mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next `count` bytes.
    @inlinable
    public mutating func bytes(_ count: some BinaryInteger) -> UnsafeRawBufferPointer? {
        guard count >= 0, UInt64(count) <= UInt64(bytes.count - position) else { return nil }
        let start = position
        position += Int(count)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
    }

    @inlinable
    mutating func readVarint(minimal: Bool) -> UInt64? {
        var result: UInt64 = 0
        var group: UInt64 = 0
        while position < bytes.count, group < 10 {
            let byte = bytes[position]
            position += 1
            // The tenth group holds the 64th bit only.
            if group == 9, byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << (7 * group)
            if byte < 0x80 {
                // A last group of zero after others is a longer encoding of a shorter value.
                return minimal && group > 0 && byte == 0 ? nil : result
            }
            group += 1
        }
        return nil
    }
}
