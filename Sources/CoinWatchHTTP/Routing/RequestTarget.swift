/// A request target (origin form: a path and an optional query), split once at its first `?` when the request
/// arrives, so routing, the Connect layer and the operators' endpoints all read the same path and query
/// without scanning the target again.
struct RequestTarget: Sendable, Equatable {
    /// The target as sent.
    let text: String
    /// Where the path ends: the `?`, or the end of the text.
    private let pathEnd: String.Index

    init(_ text: String) {
        var text = text
        // A scan of the contiguous bytes; `?` is ASCII, so its offset is also a character boundary.
        let offset = text.withUTF8 { $0.firstIndex(of: UInt8(ascii: "?")) ?? $0.count }
        self.text = text
        pathEnd = text.utf8.index(text.utf8.startIndex, offsetBy: offset)
    }

    /// The path, without the query.
    var path: Substring { text[..<pathEnd] }

    /// The query without its `?`, or nil when the target has none (an empty query after `?` is "").
    var query: Substring? {
        pathEnd == text.endIndex ? nil : text[text.utf8.index(after: pathEnd)...]
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.text == rhs.text }
}
