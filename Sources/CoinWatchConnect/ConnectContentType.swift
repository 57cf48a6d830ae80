/// A Connect request's or response's content type: which codec, and whether the body is enveloped (streaming).
public struct ConnectContentType: Hashable, Sendable, CustomStringConvertible {
    /// How messages are encoded.
    public enum Codec: Hashable, Sendable {
        /// The binary protobuf encoding.
        case proto
        /// The proto3 JSON mapping.
        case json
    }

    public let codec: Codec
    /// `application/connect+…`: the body is a sequence of envelopes (streaming calls).
    public let isStreaming: Bool

    public init(codec: Codec, isStreaming: Bool) {
        self.codec = codec
        self.isStreaming = isStreaming
    }

    /// Parses a `Content-Type` header value (`application/json; charset=utf-8`); nil for any type Connect does
    /// not define, or JSON with a charset other than UTF-8. Matching is case-insensitive, as for media types.
    public init?(headerValue: String) {
        // The four types as clients send them, compared as bytes before any splitting or lower-casing.
        if let exact = Self.all.first(where: { $0.description.utf8.elementsEqual(headerValue.utf8) }) {
            self = exact
            return
        }
        let parts = headerValue.split(separator: ";", omittingEmptySubsequences: false)
        let media = parts[0].trimmingWhitespace.lowercased()
        switch media {
        case "application/proto": self.init(codec: .proto, isStreaming: false)
        case "application/json": self.init(codec: .json, isStreaming: false)
        case "application/connect+proto": self.init(codec: .proto, isStreaming: true)
        case "application/connect+json": self.init(codec: .json, isStreaming: true)
        default: return nil
        }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingWhitespace.lowercased() == "charset" else { continue }
            let charset = pair[1].trimmingWhitespace.lowercased().replacing("\"", with: "")
            if codec == .json && charset != "utf-8" { return nil }
        }
    }

    /// The header value written on responses.
    public var description: String {
        switch (codec, isStreaming) {
        case (.proto, false): "application/proto"
        case (.json, false): "application/json"
        case (.proto, true): "application/connect+proto"
        case (.json, true): "application/connect+json"
        }
    }

    /// The four types, for `Accept-Post` on a 415 answer.
    public static let all: [ConnectContentType] = [
        .init(codec: .proto, isStreaming: false), .init(codec: .json, isStreaming: false),
        .init(codec: .proto, isStreaming: true), .init(codec: .json, isStreaming: true),
    ]
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingWhitespace: SubSequence {
        let isSpace = { (c: Character) in c == " " || c == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return self[endIndex..<endIndex] }
        let end = lastIndex(where: { !isSpace($0) })!
        return self[start...end]
    }
}
