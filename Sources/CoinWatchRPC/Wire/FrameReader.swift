import CoinWatchProto

/// A zero-copy reader for the three frames on the hot path: `Call` (every
/// request a server receives), `Message` and `End` (every response a client
/// receives).
///
/// It accepts only the plain shape the CoinWatch encoders produce: one known
/// kind, known fields with their declared wire types, each at most once, no call
/// metadata. Anything else, including every malformed input, yields `nil` and the
/// caller falls back to the generated decoder, which accepts every valid
/// encoding and explains every invalid one. So this reader never has to be
/// right about errors, only about the frames it accepts, and those are checked
/// against the generated decoder in the tests. Public for load generators, which read
/// replies at the rate the server writes them.
public enum FrameReader {
    public enum Fast {
        case call(callID: UInt64, method: UnsafeRawBufferPointer, timeoutMs: UInt64, payload: UnsafeRawBufferPointer)
        case message(callID: UInt64, payload: UnsafeRawBufferPointer)
        case end(callID: UInt64, code: Int32, message: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
    }

    public static func read(_ body: UnsafeRawBufferPointer) -> Fast? {
        var outer = ProtobufCursor(body)
        guard let (field, wireType) = outer.tag(), wireType == 2, let inner = outer.delimited(), outer.isAtEnd else {
            return nil
        }
        switch field {
        case FrameField.call: return readCall(inner)
        case FrameField.message: return readMessage(inner)
        case FrameField.end: return readEnd(inner)
        default: return nil
        }
    }

    private static func readCall(_ bytes: UnsafeRawBufferPointer) -> Fast? {
        var callID: UInt64 = 0
        var method = UnsafeRawBufferPointer(start: nil, count: 0)
        var timeout: UInt64 = 0
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        let valid = forEachField(of: bytes) { field, wireType, cursor in
            switch (field, wireType) {
            case (FrameField.Call.callID, 0): cursor.varint(into: &callID)
            case (FrameField.Call.method, 2): cursor.delimited(into: &method)
            case (FrameField.Call.timeoutMs, 0): cursor.varint(into: &timeout)
            case (FrameField.Call.payload, 2): cursor.delimited(into: &payload)
            default: false
            }
        }
        // Method names are ASCII; anything else goes through full UTF-8 validation.
        guard valid, isPlainASCII(method) else { return nil }
        return .call(callID: callID, method: method, timeoutMs: timeout, payload: payload)
    }

    private static func readMessage(_ bytes: UnsafeRawBufferPointer) -> Fast? {
        var callID: UInt64 = 0
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        let valid = forEachField(of: bytes) { field, wireType, cursor in
            switch (field, wireType) {
            case (FrameField.Message.callID, 0): cursor.varint(into: &callID)
            case (FrameField.Message.payload, 2): cursor.delimited(into: &payload)
            default: false
            }
        }
        return valid ? .message(callID: callID, payload: payload) : nil
    }

    private static func readEnd(_ bytes: UnsafeRawBufferPointer) -> Fast? {
        var callID: UInt64 = 0
        var status = UnsafeRawBufferPointer(start: nil, count: 0)
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        let valid = forEachField(of: bytes) { field, wireType, cursor in
            switch (field, wireType) {
            case (FrameField.End.callID, 0): cursor.varint(into: &callID)
            case (FrameField.End.status, 2): cursor.delimited(into: &status)
            case (FrameField.End.payload, 2): cursor.delimited(into: &payload)
            default: false
            }
        }
        guard valid else { return nil }
        var code: UInt64 = 0
        var message = UnsafeRawBufferPointer(start: nil, count: 0)
        let validStatus = forEachField(of: status) { field, wireType, cursor in
            switch (field, wireType) {
            case (FrameField.Status.code, 0): cursor.varint(into: &code)
            case (FrameField.Status.message, 2): cursor.delimited(into: &message)
            default: false
            }
        }
        // Strings must be valid UTF-8 without NUL, as the decoder requires.
        guard validStatus,
              isPlainASCII(message) || (!message.contains(0) && String(validating: message, as: UTF8.self) != nil) else {
            return nil
        }
        return .end(callID: callID, code: Int32(truncatingIfNeeded: code), message: message, payload: payload)
    }

    /// Calls `body` with each field's number and wire type and the cursor at its value,
    /// which `body` reads, returning false for a field it does not take. The scaffolding
    /// of every reader above: false as soon as a tag is malformed, a field number is not
    /// one of the first seven, a field repeats, or `body` declines.
    @inline(__always)
    private static func forEachField(
        of bytes: UnsafeRawBufferPointer, _ body: (_ field: Int, _ wireType: UInt64, _ cursor: inout ProtobufCursor) -> Bool
    ) -> Bool {
        var cursor = ProtobufCursor(bytes)
        var seen: UInt8 = 0
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field < 8, seen & (1 << field) == 0 else { return false }
            seen |= 1 << field
            guard body(field, wireType, &cursor) else { return false }
        }
        return true
    }

    /// Whether every byte is ASCII and none is NUL, eight bytes at a time.
    static func isPlainASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // No high bit set, and (with high bits clear) no byte that borrows when 1 is subtracted: no zero byte.
            guard word & high == 0, (word &- ones) & high == 0 else { return false }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte > 0 && byte < 0x80 else { return false }
            index += 1
        }
        return true
    }
}

extension ProtobufCursor {
    /// Reads a varint into `value`; false (and `value` untouched) when there is none.
    @inline(__always)
    fileprivate mutating func varint(into value: inout UInt64) -> Bool {
        guard let read = varint() else { return false }
        value = read
        return true
    }

    /// Reads a length-delimited field's bytes into `value`; false when they are not all there.
    @inline(__always)
    fileprivate mutating func delimited(into value: inout UnsafeRawBufferPointer) -> Bool {
        guard let read = delimited() else { return false }
        value = read
        return true
    }
}
