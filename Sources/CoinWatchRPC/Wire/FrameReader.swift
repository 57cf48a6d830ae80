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
/// against the generated decoder in the tests.
enum FrameReader {
    enum Fast {
        case call(callID: UInt64, method: UnsafeRawBufferPointer, timeoutMs: UInt64, payload: UnsafeRawBufferPointer)
        case message(callID: UInt64, payload: UnsafeRawBufferPointer)
        case end(callID: UInt64, code: Int32, message: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
    }

    static func read(_ body: UnsafeRawBufferPointer) -> Fast? {
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
        var cursor = ProtobufCursor(bytes)
        var callID: UInt64 = 0
        var method = UnsafeRawBufferPointer(start: nil, count: 0)
        var timeout: UInt64 = 0
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        var seen: UInt8 = 0
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field < 8, seen & (1 << field) == 0 else { return nil }
            seen |= 1 << field
            switch (field, wireType) {
            case (FrameField.Call.callID, 0): guard let value = cursor.varint() else { return nil }; callID = value
            case (FrameField.Call.method, 2): guard let value = cursor.delimited() else { return nil }; method = value
            case (FrameField.Call.timeoutMs, 0): guard let value = cursor.varint() else { return nil }; timeout = value
            case (FrameField.Call.payload, 2): guard let value = cursor.delimited() else { return nil }; payload = value
            default: return nil
            }
        }
        // Method names are ASCII; anything else goes through full UTF-8 validation.
        guard method.allSatisfy({ $0 > 0 && $0 < 0x80 }) else { return nil }
        return .call(callID: callID, method: method, timeoutMs: timeout, payload: payload)
    }

    private static func readMessage(_ bytes: UnsafeRawBufferPointer) -> Fast? {
        var cursor = ProtobufCursor(bytes)
        var callID: UInt64 = 0
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        var seen: UInt8 = 0
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field < 8, seen & (1 << field) == 0 else { return nil }
            seen |= 1 << field
            switch (field, wireType) {
            case (FrameField.Message.callID, 0): guard let value = cursor.varint() else { return nil }; callID = value
            case (FrameField.Message.payload, 2): guard let value = cursor.delimited() else { return nil }; payload = value
            default: return nil
            }
        }
        return .message(callID: callID, payload: payload)
    }

    private static func readEnd(_ bytes: UnsafeRawBufferPointer) -> Fast? {
        var cursor = ProtobufCursor(bytes)
        var callID: UInt64 = 0
        var code: Int32 = 0
        var message = UnsafeRawBufferPointer(start: nil, count: 0)
        var payload = UnsafeRawBufferPointer(start: nil, count: 0)
        var seen: UInt8 = 0
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field < 8, seen & (1 << field) == 0 else { return nil }
            seen |= 1 << field
            switch (field, wireType) {
            case (FrameField.End.callID, 0): guard let value = cursor.varint() else { return nil }; callID = value
            case (FrameField.End.payload, 2): guard let value = cursor.delimited() else { return nil }; payload = value
            case (FrameField.End.status, 2):
                guard let status = cursor.delimited(), let parsed = readStatus(status) else { return nil }
                (code, message) = parsed
            default: return nil
            }
        }
        return .end(callID: callID, code: code, message: message, payload: payload)
    }

    private static func readStatus(_ bytes: UnsafeRawBufferPointer) -> (Int32, UnsafeRawBufferPointer)? {
        var cursor = ProtobufCursor(bytes)
        var code: Int32 = 0
        var message = UnsafeRawBufferPointer(start: nil, count: 0)
        var seen: UInt8 = 0
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field < 8, seen & (1 << field) == 0 else { return nil }
            seen |= 1 << field
            switch (field, wireType) {
            case (FrameField.Status.code, 0):
                guard let value = cursor.varint() else { return nil }
                code = Int32(truncatingIfNeeded: value)
            case (FrameField.Status.message, 2):
                // Strings must be valid UTF-8 without NUL, as the decoder requires.
                guard let value = cursor.delimited(), !value.contains(0),
                      value.allSatisfy({ $0 < 0x80 }) || String(validating: value, as: UTF8.self) != nil else { return nil }
                message = value
            default: return nil
            }
        }
        return (code, message)
    }
}
