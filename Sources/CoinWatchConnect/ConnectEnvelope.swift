import CoinWatchRPC

/// Connect's streaming envelope: 1 flag byte, a 4-byte big-endian length, then the message.
public enum ConnectEnvelope {
    /// The message is compressed (refused: only `identity` is supported).
    public static let compressedFlag: UInt8 = 0x01
    /// The end-of-stream message: JSON `{"error": …, "metadata": …}`, always last.
    public static let endStreamFlag: UInt8 = 0x02

    /// Appends one envelope to `out`.
    public static func append(flags: UInt8, payload: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let count = UInt32(truncatingIfNeeded: payload.count)
        out.append(flags)
        out.append(UInt8(truncatingIfNeeded: count >> 24))
        out.append(UInt8(truncatingIfNeeded: count >> 16))
        out.append(UInt8(truncatingIfNeeded: count >> 8))
        out.append(UInt8(truncatingIfNeeded: count))
        out.append(contentsOf: payload)
    }

    /// Appends one envelope to `out`.
    public static func append(flags: UInt8, payload: [UInt8], to out: inout [UInt8]) {
        payload.withUnsafeBytes { append(flags: flags, payload: $0, to: &out) }
    }

    /// The one message of a server-streaming request body: exactly one uncompressed envelope and nothing after
    /// it. Throws `invalid_argument` (`resource_exhausted` past `maxMessageBytes`) naming what is wrong.
    public static func singleMessage(of body: UnsafeRawBufferPointer, maxMessageBytes: Int) throws(ConnectFailure)
        -> UnsafeRawBufferPointer
    {
        guard body.count >= 5 else {
            throw ConnectFailure(.invalidArgument, "the request body holds \(body.count) bytes, not an envelope (5-byte header)")
        }
        let flags = body[0]
        let length = Int(body[1]) << 24 | Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
        guard length <= maxMessageBytes else {
            throw ConnectFailure(.resourceExhausted, "request message of \(length) bytes exceeds the limit of \(maxMessageBytes)")
        }
        guard flags & compressedFlag == 0 else {
            throw ConnectFailure(.unimplemented, "compressed request messages are not supported (use identity)")
        }
        guard flags == 0 else {
            throw ConnectFailure(.invalidArgument, "request envelope flags 0x\(String(flags, radix: 16)) are not allowed")
        }
        guard body.count - 5 >= length else {
            throw ConnectFailure(.invalidArgument, "the request envelope announces \(length) bytes but \(body.count - 5) follow")
        }
        guard body.count - 5 == length else {
            throw ConnectFailure(.invalidArgument, "a server-streaming request carries exactly one message")
        }
        return UnsafeRawBufferPointer(rebasing: body[5...])
    }
}
