/// Why an HTTP/1.1 request was refused, with the status it is answered with. After one, the connection
/// answers and closes: the position in the byte stream is lost.
struct HTTP1ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 400, 413, 414, 431, 501 or 505.
    let status: Int
    let message: String

    var description: String { "\(status): \(message)" }

    static func bad(_ message: String) -> HTTP1ParseError { HTTP1ParseError(status: 400, message: message) }
}
