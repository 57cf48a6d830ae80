import CoinWatchRPC
import CoinWatchCore

/// The query of a Connect GET request: `connect=v1&encoding=json&message=…[&base64=1][&compression=identity]`.
public struct ConnectGetQuery: Sendable, Hashable {
    /// The codec named by `encoding`.
    public let codec: ConnectContentType.Codec
    /// The request message, percent-decoded (and base64-decoded when `base64=1`).
    public let message: [UInt8]

    /// Parses the query string (without the `?`). Throws `invalid_argument` naming the missing or bad parameter,
    /// `unimplemented` for a compression other than `identity`, `resource_exhausted` past `maxMessageBytes`.
    public init(_ query: Substring, maxMessageBytes: Int) throws(ConnectFailure) {
        var parameters: [String: [UInt8]] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.percentDecoded(parts[0]).map({ String(decoding: $0, as: UTF8.self) }),
                  let value = Self.percentDecoded(parts.count > 1 ? parts[1] : "")
            else { throw ConnectFailure(.invalidArgument, "the query string has a malformed percent-escape") }
            guard parameters[name] == nil else {
                throw ConnectFailure(.invalidArgument, "query parameter \"\(name)\" is given more than once")
            }
            parameters[name] = value
        }
        func text(_ name: String) -> String? { parameters[name].map { String(decoding: $0, as: UTF8.self) } }
        if let version = text("connect"), version != "v1" {
            throw ConnectFailure(.invalidArgument, "connect=\(version) is not supported (connect=v1)")
        }
        if let compression = text("compression"), compression != "identity" {
            throw ConnectFailure(.unimplemented, "compression \"\(compression)\" is not supported (identity)")
        }
        switch text("encoding") {
        case "proto": codec = .proto
        case "json": codec = .json
        case nil: throw ConnectFailure(.invalidArgument, "the query lacks encoding=proto or encoding=json")
        case let other?: throw ConnectFailure(.invalidArgument, "encoding \"\(other)\" is not supported (proto or json)")
        }
        guard var message = parameters["message"] else {
            throw ConnectFailure(.invalidArgument, "the query lacks message=")
        }
        switch text("base64") {
        case nil, "0": break
        case "1":
            // URL-safe base64; padding is optional, so it is dropped before the strict decoder.
            while message.last == UInt8(ascii: "=") { message.removeLast() }
            guard let decoded = Base64.decodeURL(String(decoding: message, as: UTF8.self)) else {
                throw ConnectFailure(.invalidArgument, "message is not URL-safe base64")
            }
            message = decoded
        case let other?: throw ConnectFailure(.invalidArgument, "base64=\(other) is not 0 or 1")
        }
        guard message.count <= maxMessageBytes else {
            throw ConnectFailure(.resourceExhausted, "request message of \(message.count) bytes exceeds the limit of \(maxMessageBytes)")
        }
        self.message = message
    }

    /// `%XX` escapes decoded and `+` read as a space (the form encoding browsers and Go's url package use); nil
    /// for a `%` not followed by two hex digits.
    static func percentDecoded(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(high << 4 | low)
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
            default:
                out.append(byte)
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
