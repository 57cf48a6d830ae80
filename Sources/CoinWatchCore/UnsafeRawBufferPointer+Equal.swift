extension UnsafeRawBufferPointer {
    /// Byte equality, eight bytes at a time: for the short keys a server compares per request (device ids, the
    /// strings of a repeated HTTP request), a call to `memcmp` costs more than comparing them in place.
    @inlinable
    public func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        var index = 0
        while index + 8 <= count {
            guard loadUnaligned(fromByteOffset: index, as: UInt64.self)
                == other.loadUnaligned(fromByteOffset: index, as: UInt64.self) else { return false }
            index += 8
        }
        while index < count {
            guard self[index] == other[index] else { return false }
            index += 1
        }
        return true
    }
}

extension String {
    /// Whether the string's UTF-8 is exactly `bytes`: for handing back a String made for the same bytes before
    /// (the values a client repeats on every request) instead of making a new one.
    @inlinable
    public func hasSameUTF8(as bytes: UnsafeRawBufferPointer) -> Bool {
        var string = self
        return string.withUTF8 { UnsafeRawBufferPointer($0).hasSameBytes(as: bytes) }
    }
}
