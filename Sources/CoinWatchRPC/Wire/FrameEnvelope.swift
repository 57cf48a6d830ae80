import CoinWatchProto

/// Field numbers of `rpc.proto` used by the hand-written envelope writers and readers (public for the load
/// tool's pre-encoded calls).
public enum FrameField {
    public static let call = 3
    public static let message = 4
    public static let end = 5

    public enum Call {
        public static let callID = 1, method = 2, timeoutMs = 3, metadata = 4, payload = 5
    }

    public enum Message {
        public static let callID = 1, payload = 2
    }

    public enum End {
        public static let callID = 1, status = 2, payload = 4
    }

    public enum Status {
        public static let code = 1, message = 2
    }

    public enum MapEntry {
        public static let key = 1, value = 2
    }
}

/// Sizes and writers for the frames on the hot path: `End` (every unary reply),
/// `Message` (every stream item) and `Call` (every client request).
enum FrameEnvelope {
    // MARK: End

    static func statusSize(code: Int32, message: String) -> Int {
        ProtobufWriter.varintFieldSize(field: FrameField.Status.code, UInt64(UInt32(bitPattern: code)))
            + (message.isEmpty ? 0 : ProtobufWriter.delimitedSize(field: FrameField.Status.message, length: message.utf8.count))
    }

    static func endSize(callID: UInt64, code: Int32, message: String, payloadCount: Int) -> Int {
        let status = statusSize(code: code, message: message)
        return ProtobufWriter.varintFieldSize(field: FrameField.End.callID, callID)
            + (status == 0 ? 0 : ProtobufWriter.delimitedSize(field: FrameField.End.status, length: status))
            + (payloadCount == 0 ? 0 : ProtobufWriter.delimitedSize(field: FrameField.End.payload, length: payloadCount))
    }

    /// The body of a `Frame{end: End{call_id, status, payload}}`.
    static func endFrameSize(callID: UInt64, code: Int32, message: String, payloadCount: Int) -> Int {
        ProtobufWriter.delimitedSize(
            field: FrameField.end, length: endSize(callID: callID, code: code, message: message, payloadCount: payloadCount))
    }

    static func writeEndFrame(
        into buffer: UnsafeMutableRawBufferPointer, callID: UInt64, code: Int32, message: String,
        payload: UnsafeRawBufferPointer
    ) {
        var writer = ProtobufWriter(buffer)
        writer.writeDelimitedHeader(
            FrameField.end, length: endSize(callID: callID, code: code, message: message, payloadCount: payload.count))
        writer.writeVarintField(FrameField.End.callID, callID)
        let status = statusSize(code: code, message: message)
        if status > 0 {
            writer.writeDelimitedHeader(FrameField.End.status, length: status)
            writer.writeVarintField(FrameField.Status.code, UInt64(UInt32(bitPattern: code)))
            if !message.isEmpty { writer.writeString(FrameField.Status.message, message) }
        }
        if !payload.isEmpty { writer.writeDelimited(FrameField.End.payload, payload) }
        precondition(writer.isFull, "End frame size mismatch")
    }

    // MARK: Message

    /// Size of a `Frame{message: Message{call_id, payload}}` body for a payload of `payloadCount` bytes.
    static func messageFrameSize(callID: UInt64, payloadCount: Int) -> Int {
        messageEnvelopeSize(callID: callID, payloadCount: payloadCount) + payloadCount
    }

    static func messageEnvelopeSize(callID: UInt64, payloadCount: Int) -> Int {
        let messageSize = messageSize(callID: callID, payloadCount: payloadCount)
        return ProtobufWriter.delimitedSize(field: FrameField.message, length: messageSize) - payloadCount
    }

    private static func messageSize(callID: UInt64, payloadCount: Int) -> Int {
        ProtobufWriter.varintFieldSize(field: FrameField.Message.callID, callID)
            + ProtobufWriter.delimitedSize(field: FrameField.Message.payload, length: payloadCount)
    }

    /// Writes everything of a `Frame{message: Message{call_id, payload}}` body
    /// that precedes the payload bytes (the payload, and any per-call tail counted
    /// in `payloadCount`, follow unchanged). Returns the bytes written.
    @discardableResult
    static func writeMessageEnvelope(into buffer: UnsafeMutableRawBufferPointer, callID: UInt64, payloadCount: Int) -> Int {
        let size = messageEnvelopeSize(callID: callID, payloadCount: payloadCount)
        var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(rebasing: buffer[..<size]))
        writer.writeDelimitedHeader(FrameField.message, length: messageSize(callID: callID, payloadCount: payloadCount))
        writer.writeVarintField(FrameField.Message.callID, callID)
        writer.writeDelimitedHeader(FrameField.Message.payload, length: payloadCount)
        precondition(writer.isFull, "Message envelope size mismatch")
        return size
    }

    // MARK: Call

    static func callSize(callID: UInt64, method: String, timeoutMs: UInt64, metadata: [(String, String)], payloadCount: Int) -> Int {
        var size = ProtobufWriter.varintFieldSize(field: FrameField.Call.callID, callID)
            + ProtobufWriter.delimitedSize(field: FrameField.Call.method, length: method.utf8.count)
            + ProtobufWriter.varintFieldSize(field: FrameField.Call.timeoutMs, timeoutMs)
            + (payloadCount == 0 ? 0 : ProtobufWriter.delimitedSize(field: FrameField.Call.payload, length: payloadCount))
        for (key, value) in metadata {
            size += ProtobufWriter.delimitedSize(field: FrameField.Call.metadata, length: mapEntrySize(key, value))
        }
        return size
    }

    static func mapEntrySize(_ key: String, _ value: String) -> Int {
        (key.isEmpty ? 0 : ProtobufWriter.delimitedSize(field: FrameField.MapEntry.key, length: key.utf8.count))
            + (value.isEmpty ? 0 : ProtobufWriter.delimitedSize(field: FrameField.MapEntry.value, length: value.utf8.count))
    }

    static func callFrameSize(callID: UInt64, method: String, timeoutMs: UInt64, metadata: [(String, String)], payloadCount: Int) -> Int {
        ProtobufWriter.delimitedSize(
            field: FrameField.call,
            length: callSize(callID: callID, method: method, timeoutMs: timeoutMs, metadata: metadata, payloadCount: payloadCount))
    }

    static func writeCallFrame(
        into buffer: UnsafeMutableRawBufferPointer, callID: UInt64, method: String, timeoutMs: UInt64,
        metadata: [(String, String)], payload: UnsafeRawBufferPointer
    ) {
        var writer = ProtobufWriter(buffer)
        writer.writeDelimitedHeader(
            FrameField.call,
            length: callSize(callID: callID, method: method, timeoutMs: timeoutMs, metadata: metadata, payloadCount: payload.count))
        writer.writeVarintField(FrameField.Call.callID, callID)
        writer.writeString(FrameField.Call.method, method)
        writer.writeVarintField(FrameField.Call.timeoutMs, timeoutMs)
        for (key, value) in metadata {
            writer.writeDelimitedHeader(FrameField.Call.metadata, length: mapEntrySize(key, value))
            if !key.isEmpty { writer.writeString(FrameField.MapEntry.key, key) }
            if !value.isEmpty { writer.writeString(FrameField.MapEntry.value, value) }
        }
        if !payload.isEmpty { writer.writeDelimited(FrameField.Call.payload, payload) }
        precondition(writer.isFull, "Call frame size mismatch")
    }
}
