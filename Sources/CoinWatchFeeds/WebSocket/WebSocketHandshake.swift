import Foundation

/// The client side of the opening handshake (RFC 6455 §4.1): the upgrade request, and the checks on the server's
/// answer, as a pure function of bytes so it is tested and fuzzed without a socket.
///
/// The answer must be `HTTP/1.1 101`, with `Upgrade: websocket`, `Connection: Upgrade` and the
/// `Sec-WebSocket-Accept` derived from our key; it must not pick an extension or a subprotocol, since we offer none.
/// Any other status fails: 429 (and 503 with `Retry-After`) as `rateLimited`, so the caller backs off longer.
/// The answer's head is bounded (`maxHeadBytes`); bytes after it already belong to the frame stream.
public struct WebSocketHandshake: Sendable {
    /// Largest response head accepted (status line plus headers).
    public static let maxHeadBytes = 16 * 1024
    /// RFC 6455 §1.3: appended to the key before hashing.
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    public let url: WebSocketURL
    /// The base64 of 16 random bytes, sent as `Sec-WebSocket-Key`.
    public let key: String
    /// What `Sec-WebSocket-Accept` must be: base64(SHA-1(key + GUID)).
    public let expectedAccept: String
    /// Extra request headers (name, value), e.g. a user agent.
    public let headers: [(String, String)]
    private var head: [UInt8] = []

    /// - Parameters:
    ///   - keyBytes: 16 bytes from a secure random source.
    ///   - sha1: SHA-1 of its input, for the accept value.
    public init(
        url: WebSocketURL, keyBytes: [UInt8], headers: [(String, String)] = [], sha1: ([UInt8]) -> [UInt8]
    ) {
        precondition(keyBytes.count == 16, "a WebSocket key is 16 bytes")
        self.url = url
        self.headers = headers
        key = Data(keyBytes).base64EncodedString()
        expectedAccept = Self.accept(forKey: key, sha1: sha1)
    }

    /// base64(SHA-1(key + GUID)).
    public static func accept(forKey key: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Data(sha1(Array((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// The upgrade request.
    public var request: [UInt8] {
        var text = "GET \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The outcome of feeding response bytes.
    public enum Progress: Equatable {
        /// The head is not complete yet.
        case needMore
        /// The upgrade succeeded; `remainder` are the bytes after the head (the first frames).
        case upgraded(remainder: [UInt8])
    }

    /// Feeds bytes of the server's answer.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) throws(WebSocketError) -> Progress {
        let searchFrom = max(0, head.count - 3)
        head.append(contentsOf: bytes)
        guard let end = Self.headEnd(head, from: searchFrom) else {
            guard head.count <= Self.maxHeadBytes else {
                throw WebSocketError(
                    code: .handshakeFailed, message: "the upgrade response head is longer than \(Self.maxHeadBytes) bytes")
            }
            return .needMore
        }
        guard end <= Self.maxHeadBytes else {
            throw WebSocketError(
                code: .handshakeFailed, message: "the upgrade response head is longer than \(Self.maxHeadBytes) bytes")
        }
        let remainder = Array(head[end...])
        let response = try Self.parseHead(head[..<end])
        head = []
        try check(response)
        return .upgraded(remainder: remainder)
    }

    /// Where the blank line ending the head is (just past it), searching from `from`.
    private static func headEnd(_ bytes: [UInt8], from: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = from
        while index + 3 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    struct Response {
        var status: Int
        var reason: String
        /// Lowercased names; repeated headers joined with ", " as HTTP allows.
        var headers: [String: String]
    }

    static func parseHead(_ bytes: ArraySlice<UInt8>) throws(WebSocketError) -> Response {
        func failed(_ message: String) -> WebSocketError {
            WebSocketError(code: .handshakeFailed, message: message)
        }
        // Header values are Latin-1 in old HTTP; anything not ASCII is refused rather than guessed.
        guard bytes.allSatisfy({ $0 < 0x80 }) else { throw failed("the upgrade response is not ASCII") }
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while lines.last == "" { lines.removeLast() }
        guard let statusLine = lines.first else { throw failed("an empty upgrade response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...999).contains(status)
        else {
            throw failed("not an HTTP response: '\(statusLine.prefix(80))'")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw failed("a malformed header line '\(line.prefix(80))'")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        return Response(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    private func check(_ response: Response) throws(WebSocketError) {
        func failed(_ message: String) -> WebSocketError {
            WebSocketError(code: .handshakeFailed, message: message)
        }
        guard response.status == 101 else {
            let retryAfter = response.headers["retry-after"].flatMap { Int($0) }.map { max(0, $0) }
            if response.status == 429 || (response.status == 503 && retryAfter != nil) {
                throw WebSocketError(
                    code: .rateLimited,
                    message: "HTTP \(response.status) \(response.reason) on the upgrade"
                        + (retryAfter.map { " (Retry-After \($0) s)" } ?? ""),
                    retryAfterSeconds: retryAfter)
            }
            throw failed("HTTP \(response.status) \(response.reason) instead of 101 Switching Protocols")
        }
        guard response.headers["upgrade"]?.lowercased() == "websocket" else {
            throw failed("the response lacks 'Upgrade: websocket'")
        }
        let connection = response.headers["connection"]?.lowercased() ?? ""
        guard connection.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "upgrade" })
        else {
            throw failed("the response lacks 'Connection: Upgrade'")
        }
        guard let accept = response.headers["sec-websocket-accept"] else {
            throw WebSocketError(code: .badAccept, message: "the response lacks Sec-WebSocket-Accept")
        }
        guard accept == expectedAccept else {
            throw WebSocketError(
                code: .badAccept, message: "Sec-WebSocket-Accept '\(accept.prefix(40))' does not match the key we sent")
        }
        if let extensions = response.headers["sec-websocket-extensions"], !extensions.isEmpty {
            throw failed("the server chose extensions we did not offer: \(extensions.prefix(80))")
        }
        if let subprotocol = response.headers["sec-websocket-protocol"], !subprotocol.isEmpty {
            throw failed("the server chose a subprotocol we did not offer: \(subprotocol.prefix(80))")
        }
    }
}
