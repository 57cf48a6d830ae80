/// Splits the bytes a server sends into WebSocket messages and control frames (RFC 6455 §5), incrementally: bytes
/// may arrive in any split, and nothing waits for more than the current frame needs.
///
/// Limits are checked from the frame header, before the payload is read: a message whose frames add up to more than
/// `maxMessageBytes` fails at the header that would cross the limit, so its payload is never buffered (the caller
/// closes with 1009 and stops reading). A complete single-frame message that lies entirely in one read is handed out
/// in place, without a copy; fragmented messages and frames split across reads are assembled in one buffer whose size
/// is bounded by the limit.
///
/// Server frames must not be masked, must not set reserved bits (no extension is negotiated) and must use a known
/// opcode; control frames must be final and at most 125 bytes; a continuation must follow an unfinished message and a
/// new message must not interrupt one. Each of these fails with `protocolError` (close code 1002). After an error,
/// or after a close frame, the parser ignores further input.
public struct WebSocketFrameParser: Sendable {
    /// What one frame (or a completed message) amounts to. Payloads are valid only during the handler call.
    public enum Event {
        /// A complete text or binary message (all its fragments, in order).
        case message(WebSocketOpcode, UnsafeRawBufferPointer)
        case ping(UnsafeRawBufferPointer)
        case pong(UnsafeRawBufferPointer)
        /// The peer's close frame: its code (nil when the frame had no payload) and reason. Validated: a bad code
        /// or a reason that is not UTF-8 fails instead.
        case close(code: UInt16?, reason: String)
    }

    private enum Phase: Sendable {
        case header
        case payload
        /// After a close frame or an error: input is ignored.
        case done
    }

    public let maxMessageBytes: Int
    private var phase = Phase.header
    /// The header bytes read so far (at most 14).
    private var header: [UInt8] = []
    /// The current frame.
    private var opcode = WebSocketOpcode.continuation
    private var isFinal = false
    private var remaining = 0
    /// The opcode of the fragmented message being assembled, if any.
    private var messageOpcode: WebSocketOpcode?
    /// The fragments of the message so far, or the part of the current frame read so far.
    private var messageBuffer: [UInt8] = []
    /// Whether the current data frame is collected in `messageBuffer` (rather than handed out in place).
    private var collecting = false
    /// The payload of the current control frame read so far.
    private var controlBuffer: [UInt8] = []

    public init(maxMessageBytes: Int) {
        precondition(maxMessageBytes > 0, "maxMessageBytes must be positive")
        self.maxMessageBytes = maxMessageBytes
        header.reserveCapacity(14)
    }

    /// Bytes held for an unfinished frame or message: never more than `maxMessageBytes` plus a control frame.
    public var bufferedBytes: Int { messageBuffer.count + controlBuffer.count + header.count }

    /// Whether a close frame or an error ended parsing.
    public var isDone: Bool {
        if case .done = phase { return true }
        return false
    }

    /// Parses `input`, calling `handle` for each message and control frame in order.
    ///
    /// - Throws: the first violation; the parser is done from then on (later calls do nothing).
    public mutating func parse(
        _ input: UnsafeRawBufferPointer, _ handle: (Event) -> Void
    ) throws(WebSocketError) {
        var offset = 0
        let count = input.count
        while offset < count {
            switch phase {
            case .done:
                return
            case .header:
                // The fast path: a whole final data frame in place, outside any fragmented message.
                if header.isEmpty, let frame = try completeFrame(input, at: offset) {
                    offset = frame.end
                    handle(.message(frame.opcode, UnsafeRawBufferPointer(rebasing: input[frame.payload])))
                    continue
                }
                header.append(input[offset])
                offset += 1
                try headerProgress(handle)
            case .payload:
                let take = min(remaining, count - offset)
                let bytes = UnsafeRawBufferPointer(rebasing: input[offset..<(offset + take)])
                offset += take
                remaining -= take
                if opcode.isControl {
                    controlBuffer.append(contentsOf: bytes)
                } else if collecting {
                    messageBuffer.append(contentsOf: bytes)
                }
                if remaining == 0 {
                    try finishFrame(handle)
                }
            }
        }
    }

    // MARK: Header

    /// How many bytes the header needs, from what was read of it so far (nil: not known yet).
    private static func headerLength(_ second: UInt8) -> Int {
        switch second & 0x7F {
        case 126: 4
        case 127: 10
        default: 2
        }
    }

    /// A final text or binary frame, unmasked, wholly inside `input` from `offset`, when no message is being
    /// assembled: its opcode, payload range and end. Nil when it is anything else (then the slow path reads it).
    private func completeFrame(
        _ input: UnsafeRawBufferPointer, at offset: Int
    ) throws(WebSocketError) -> (opcode: WebSocketOpcode, payload: Range<Int>, end: Int)? {
        guard messageOpcode == nil, input.count - offset >= 2 else { return nil }
        let first = input[offset]
        let second = input[offset + 1]
        guard first == 0x81 || first == 0x82, second & 0x80 == 0 else { return nil }
        let headerLength = Self.headerLength(second)
        guard input.count - offset >= headerLength else { return nil }
        var length = Int(second & 0x7F)
        if length == 126 {
            length = Int(input[offset + 2]) << 8 | Int(input[offset + 3])
        } else if length == 127 {
            var value: UInt64 = 0
            for index in 2..<10 { value = value << 8 | UInt64(input[offset + index]) }
            // Let the slow path report a length that does not fit (or breaks the limit).
            guard value <= UInt64(maxMessageBytes) else { return nil }
            length = Int(value)
        }
        guard length <= maxMessageBytes else { return nil }
        let start = offset + headerLength
        guard input.count - start >= length else { return nil }
        return (first == 0x81 ? .text : .binary, start..<(start + length), start + length)
    }

    /// Checks the header once it is complete and moves to the payload.
    private mutating func headerProgress(_ handle: (Event) -> Void) throws(WebSocketError) {
        guard header.count >= 2 else { return }
        let first = header[0]
        let second = header[1]
        guard header.count == Self.headerLength(second) + (second & 0x80 != 0 ? 4 : 0) else {
            // A masked frame is refused as soon as its second byte is known, before its length is read.
            if second & 0x80 != 0 { throw fail(.protocolViolation("the server sent a masked frame")) }
            return
        }
        if second & 0x80 != 0 { throw fail(.protocolViolation("the server sent a masked frame")) }
        guard first & 0x70 == 0 else {
            throw fail(.protocolViolation("reserved bits set (no extension was negotiated)"))
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw fail(.protocolViolation("unknown opcode \(first & 0x0F)"))
        }
        let isFinal = first & 0x80 != 0
        var length: UInt64 = UInt64(second & 0x7F)
        if length == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
        } else if length == 127 {
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(header[index]) }
            guard length >> 63 == 0 else {
                throw fail(.protocolViolation("a 64-bit payload length with its top bit set"))
            }
        }
        header.removeAll(keepingCapacity: true)
        if opcode.isControl {
            guard isFinal else { throw fail(.protocolViolation("a fragmented control frame")) }
            guard length <= UInt64(WebSocketFrameWriter.maxControlPayload) else {
                throw fail(.protocolViolation("a control frame of \(length) bytes (at most 125)"))
            }
        } else {
            switch (opcode, messageOpcode) {
            case (.continuation, nil):
                throw fail(.protocolViolation("a continuation frame without a message to continue"))
            case (.text, .some), (.binary, .some):
                throw fail(.protocolViolation("a new message started before the last one was finished"))
            default:
                break
            }
            let soFar = UInt64(messageBuffer.count)
            guard length <= UInt64(maxMessageBytes) - soFar else {
                throw fail(WebSocketError(
                    code: .messageTooBig,
                    message: "a message of more than \(maxMessageBytes) bytes (\(soFar) so far, a frame of \(length))",
                    closeCode: WebSocketCloseCode.messageTooBig))
            }
            if opcode != .continuation { messageOpcode = opcode }
            collecting = true
            reserve(messageBuffer.count + Int(length))
        }
        self.opcode = opcode
        self.isFinal = isFinal
        remaining = Int(length)
        phase = .payload
        if remaining == 0 {
            try finishFrame(handle)
        }
    }

    /// Makes room for `needed` bytes of message. Up to `directThreshold` the buffer at least doubles (a message of
    /// many small fragments costs amortised linear copying); past it, it is made as large as the limit at once, so
    /// no large buffer is ever copied into a larger one. Pages of that allocation are touched only as bytes arrive
    /// (malloc hands out untouched memory for it), so resident memory follows what was received: at most the limit
    /// plus the small buffer it replaced, never one and a half times the limit as doubling up to it would.
    private mutating func reserve(_ needed: Int) {
        guard needed > messageBuffer.capacity else { return }
        let capacity = needed > Self.directThreshold ? maxMessageBytes : max(needed, 2 * messageBuffer.capacity)
        messageBuffer.reserveCapacity(min(capacity, maxMessageBytes))
    }

    /// The message size past which the buffer goes straight to the limit.
    static let directThreshold = 64 * 1024

    // MARK: Payload

    private mutating func finishFrame(_ handle: (Event) -> Void) throws(WebSocketError) {
        phase = .header
        switch opcode {
        case .ping:
            controlBuffer.withUnsafeBytes { handle(.ping($0)) }
            controlBuffer.removeAll(keepingCapacity: true)
        case .pong:
            controlBuffer.withUnsafeBytes { handle(.pong($0)) }
            controlBuffer.removeAll(keepingCapacity: true)
        case .close:
            let (code, reason) = try closeFrame(controlBuffer)
            controlBuffer = []
            phase = .done
            handle(.close(code: code, reason: reason))
        case .text, .binary, .continuation:
            guard isFinal, let kind = messageOpcode else { return }
            messageOpcode = nil
            collecting = false
            messageBuffer.withUnsafeBytes { handle(.message(kind, $0)) }
            // Keep a small buffer for the next message; release what a large one needed.
            if messageBuffer.capacity > 64 * 1024 {
                messageBuffer = []
            } else {
                messageBuffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Validates a close frame's payload (§5.5.1, §7.4): empty, or a code the wire may carry plus UTF-8 text.
    private mutating func closeFrame(_ payload: [UInt8]) throws(WebSocketError) -> (UInt16?, String) {
        if payload.isEmpty { return (nil, "") }
        guard payload.count >= 2 else { throw fail(.protocolViolation("a close frame with a one-byte payload")) }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidOnWire(code) else {
            throw fail(.protocolViolation("close code \(code) may not be sent"))
        }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw fail(WebSocketError(
                code: .invalidText, message: "the close reason is not UTF-8",
                closeCode: WebSocketCloseCode.invalidPayload))
        }
        return (code, reason)
    }

    private mutating func fail(_ error: WebSocketError) -> WebSocketError {
        phase = .done
        messageBuffer = []
        controlBuffer = []
        header = []
        return error
    }
}
