import CoinWatchProto

extension ServerConnection {
    /// Sends a connection-level frame (`Welcome`, `Pong`, `GoAway`, `ConnectionError`): rare, so encoded
    /// by the generated encoder.
    func send(_ kind: V1.Frame.Kind) {
        let bytes = V1.Frame(kind: kind).serializedBytes()
        bytes.withUnsafeBytes { connection.enqueueFrame(body: $0) }
    }

    /// Writes a call's `End`, envelope by hand, straight into the loop's output arena.
    func sendEnd(callID: UInt64, code: RPCError.Code, message: String,
                 payload: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        // Messages the runtime writes itself quote what the peer sent (an unknown method, a metadata key).
        let message = RPCError.bounded(message)
        let size = FrameEnvelope.endFrameSize(callID: callID, code: code.rawValue, message: message, payloadCount: payload.count)
        connection.enqueueFrame(bodyLength: size) { buffer in
            FrameEnvelope.writeEndFrame(into: buffer, callID: callID, code: code.rawValue, message: message, payload: payload)
        }
    }

    /// Writes one `Frame{message: Message{call_id, payload}}` whose payload is `payload` followed by `suffix`,
    /// length prefix and envelope included, straight into the loop's output arena: the one writer of `Message`
    /// frames, used by single sends and by the fan-out's batches alike. A stream's consecutive messages thereby
    /// form one contiguous range of one `sendmsg`; for a price update (tens of bytes) the copy costs less than
    /// queueing a reference would.
    @inline(__always)
    static func writeMessageFrame(
        callID: UInt64, payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, to connection: Connection
    ) {
        let count = payload.count + suffix.count
        let bodyLength = FrameEnvelope.messageFrameSize(callID: callID, payloadCount: count)
        connection.withUnsafeOutputBuffer(capacity: FrameEncoder.headerSize + bodyLength) { buffer in
            FrameEncoder.writeHeader(bodyLength: bodyLength, to: buffer.baseAddress!)
            var cursor = FrameEncoder.headerSize
            cursor += FrameEnvelope.writeMessageEnvelope(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[cursor...]), callID: callID, payloadCount: count)
            if !payload.isEmpty {
                (buffer.baseAddress! + cursor).copyMemory(from: payload.baseAddress!, byteCount: payload.count)
                cursor += payload.count
            }
            if !suffix.isEmpty {
                (buffer.baseAddress! + cursor).copyMemory(from: suffix.baseAddress!, byteCount: suffix.count)
                cursor += suffix.count
            }
            precondition(cursor == buffer.count, "Message frame size mismatch")
            return buffer.count
        }
    }

    func sendGoAway(code: RPCError.Code, reason: String) {
        send(.goAway(V1.GoAway(lastCallID: highestCallID, code: code.wire, reason: reason)))
    }
}
