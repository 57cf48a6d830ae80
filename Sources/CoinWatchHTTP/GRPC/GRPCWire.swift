import CoinWatchRPC

/// The small text rules of gRPC over HTTP/2: timeouts, status messages, metadata.
enum GRPCWire {
    /// `grpc-timeout`: 1 to 8 digits and a unit (`H`, `M`, `S`, `m`, `u`, `n`), as nanoseconds (saturating);
    /// nil when malformed.
    static func timeoutNanos(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes.count <= 9 else { return nil }
        var value: Int64 = 0
        for byte in bytes.dropLast() {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        let perUnit: Int64
        switch bytes.last! {
        case UInt8(ascii: "H"): perUnit = 3_600_000_000_000
        case UInt8(ascii: "M"): perUnit = 60_000_000_000
        case UInt8(ascii: "S"): perUnit = 1_000_000_000
        case UInt8(ascii: "m"): perUnit = 1_000_000
        case UInt8(ascii: "u"): perUnit = 1_000
        case UInt8(ascii: "n"): perUnit = 1
        default: return nil
        }
        let (nanos, overflow) = value.multipliedReportingOverflow(by: perUnit)
        return overflow ? Int64.max : max(1, nanos)
    }

    /// `grpc-message`'s percent-encoding: every byte of the UTF-8 text outside printable ASCII (0x20...0x7E),
    /// and `%` itself, as `%XX` with upper-case hex.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if byte >= 0x20 && byte <= 0x7e && byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0f)]))
            }
        }
        return out
    }

    /// Request headers that are gRPC's or HTTP's own rather than the caller's metadata.
    static func isReserved(_ name: String) -> Bool {
        name.hasPrefix(":") || name == "content-type" || name == "te" || name == "grpc-timeout"
            || name == "grpc-encoding" || name == "grpc-accept-encoding" || name == "content-length"
            || name == "connection" || name == "host" || name == "user-agent" || name == "grpc-message-type"
    }

    /// The trailers (or a Trailers-Only response's fields) carrying `code` and `message`.
    static func statusFields(code: Int32, message: String) -> [(name: String, value: String)] {
        if code == 0 && message.isEmpty { return okFields }
        var fields = [(name: "grpc-status", value: String(code))]
        // Bounded like a native End's message: it may quote what the caller sent, and a header has limits.
        if !message.isEmpty { fields.append(("grpc-message", percentEncoded(RPCError.bounded(message)))) }
        return fields
    }

    /// The trailers of every successful call, made once.
    private static let okFields = [(name: "grpc-status", value: "0")]
}
