import CoinWatchCore

/// The request header fields an HTTP/2 connection reads by name, told apart by their bytes, and the values its last
/// requests gave them.
///
/// A client repeats most of a request's fields on every request (HPACK sends them from its table), so a value the
/// same as the last one of its field is the String made then, not a new one: a gRPC client's path, content type
/// and user agent would otherwise be three allocations per call. Names are compared as bytes and never become
/// Strings unless they are the caller's metadata. Loop-confined, like its connection.
struct HTTP2RequestFields {
    enum Name: Int, CaseIterable {
        case method, path, scheme, authority, contentType, te, grpcTimeout, grpcEncoding, userAgent

        /// The field's name as sent (HTTP/2 names are lower case; nghttp2 refuses others). A literal: no allocation.
        var text: String {
            switch self {
            case .method: ":method"
            case .path: ":path"
            case .scheme: ":scheme"
            case .authority: ":authority"
            case .contentType: "content-type"
            case .te: "te"
            case .grpcTimeout: "grpc-timeout"
            case .grpcEncoding: "grpc-encoding"
            case .userAgent: "user-agent"
            }
        }

        /// A pseudo-field (`:method`, `:path`, `:scheme`, `:authority`), which is not one of the request's headers.
        var isPseudo: Bool { self == .method || self == .path || self == .scheme || self == .authority }

        /// The field named `bytes`, if it is one of these.
        init?(_ bytes: UnsafeRawBufferPointer) {
            // At most two names share a length, and one byte tells those two apart; the whole name is then
            // compared.
            let name: Name
            switch bytes.count {
            case 2: name = .te
            case 5: name = .path
            case 7: name = bytes[1] == UInt8(ascii: "m") ? .method : .scheme
            case 10: name = bytes[0] == UInt8(ascii: ":") ? .authority : .userAgent
            case 12: name = bytes[0] == UInt8(ascii: "c") ? .contentType : .grpcTimeout
            case 13: name = .grpcEncoding
            default: return nil
            }
            guard name.text.hasSameUTF8(as: bytes) else { return nil }
            self = name
        }
    }

    /// The last value of each field, by `Name.rawValue`.
    private var lastValues = [String?](repeating: nil, count: Name.allCases.count)
    /// The last `:path`, split (its text is `lastValues[path]`).
    private var lastTarget: RequestTarget?

    /// `bytes` as the value of `name`: the String of its last value when the bytes are the same.
    mutating func value(_ name: Name, _ bytes: UnsafeRawBufferPointer) -> String {
        if let kept = lastValues[name.rawValue], kept.hasSameUTF8(as: bytes) {
            return kept
        }
        let text = String(decoding: bytes, as: UTF8.self)
        lastValues[name.rawValue] = text
        return text
    }

    /// `bytes` as a `:path`: the last request's target when the bytes are the same.
    mutating func target(_ bytes: UnsafeRawBufferPointer) -> RequestTarget {
        let text = value(.path, bytes)
        if let lastTarget, lastTarget.text == text { return lastTarget }
        let target = RequestTarget(text)
        lastTarget = target
        return target
    }
}
