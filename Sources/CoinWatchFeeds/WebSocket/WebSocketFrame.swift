/// The opcodes of RFC 6455 §5.2.
public enum WebSocketOpcode: UInt8, Sendable, Hashable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented, may arrive between the fragments of a message.
    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Writes client frames: always masked (RFC 6455 §5.3: a client must mask every frame, with a fresh unpredictable
/// key per frame, so that a proxy cannot be poisoned with bytes of the client's choosing).
public enum WebSocketFrameWriter {
    /// Largest control-frame payload (§5.5).
    public static let maxControlPayload = 125

    /// Appends one final frame carrying `payload`, masked with `maskKey`.
    public static func append(
        _ opcode: WebSocketOpcode, payload: some Collection<UInt8>, maskKey: UInt32, to output: inout [UInt8]
    ) {
        let count = payload.count
        output.append(0x80 | opcode.rawValue)
        if count < 126 {
            output.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            output.append(0x80 | 126)
            output.append(UInt8(count >> 8))
            output.append(UInt8(count & 0xFF))
        } else {
            output.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                output.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift)))
            }
        }
        let mask: [UInt8] = [
            UInt8(truncatingIfNeeded: maskKey >> 24), UInt8(truncatingIfNeeded: maskKey >> 16),
            UInt8(truncatingIfNeeded: maskKey >> 8), UInt8(truncatingIfNeeded: maskKey),
        ]
        output.append(contentsOf: mask)
        output.reserveCapacity(output.count + count)
        var index = 0
        for byte in payload {
            output.append(byte ^ mask[index & 3])
            index += 1
        }
    }

    /// The payload of a close frame: the code, big-endian, then the reason, cut to fit 125 bytes on a character
    /// boundary.
    public static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var reasonBytes = 0
        for character in reason {
            let utf8 = Array(String(character).utf8)
            guard reasonBytes + utf8.count <= maxControlPayload - 2 else { break }
            payload.append(contentsOf: utf8)
            reasonBytes += utf8.count
        }
        return payload
    }
}
