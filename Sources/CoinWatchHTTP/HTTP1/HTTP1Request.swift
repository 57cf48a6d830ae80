/// One HTTP/1.1 request as the parser delivers it: complete, body included.
struct HTTP1Request: Sendable {
    var method: String
    /// The request target as sent (origin form: path and query), split at its query.
    var target: RequestTarget
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    var minorVersion: Int
    /// Header fields in order, names lower-cased, values with surrounding whitespace removed.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The last value of header `name` (lower case).
    func header(_ name: String) -> String? {
        headers.last { $0.name == name }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    var keepAlive: Bool {
        let tokens = headers.filter { $0.name == "connection" }
            .flatMap { $0.value.lowercased().split(separator: ",").map { $0.trimmingSpaces } }
        if minorVersion == 0 { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
