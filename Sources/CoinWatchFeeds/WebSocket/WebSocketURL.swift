import CoinWatchCore

/// A `ws://` or `wss://` endpoint, split into what the connection and the upgrade request need.
public struct WebSocketURL: Sendable, Hashable, CustomStringConvertible {
    public var isSecure: Bool
    public var host: String
    public var port: Int
    /// The request target: path and query, at least `/`.
    public var target: String

    public init(isSecure: Bool, host: String, port: Int, target: String = "/") {
        self.isSecure = isSecure
        self.host = host
        self.port = port
        self.target = target.isEmpty ? "/" : target
    }

    /// Parses `ws://host[:port][/path][?query]` or `wss://…`. IPv6 literals go in brackets. No user info, no
    /// fragment, no spaces or control characters.
    public init(parsing text: String) throws(FeedError) {
        func invalid(_ reason: String) -> FeedError {
            FeedError(code: .invalidURL, message: "'\(text)' is not a WebSocket URL: \(reason)")
        }
        let secure: Bool
        var rest: Substring
        if text.lowercased().hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
        } else if text.lowercased().hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else {
            throw invalid("it must start with ws:// or wss://")
        }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw invalid("it contains a space or a control character")
        }
        guard !rest.contains("#") else { throw invalid("a fragment (#…) has no meaning here") }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@") else { throw invalid("user information (…@) is not supported") }
        let address: HostAndPort
        do {
            address = try HostAndPort(parsing: authority, defaultPort: secure ? 443 : 80)
        } catch {
            throw invalid(error.message)
        }
        self.init(isSecure: secure, host: address.host, port: address.port, target: target)
    }

    /// The `Host` header: the port only when it is not the scheme's default, IPv6 literals in brackets.
    public var hostHeader: String {
        let address = HostAndPort(host: host, port: port)
        return port == (isSecure ? 443 : 80) ? address.hostText : address.description
    }

    public var description: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(target)" }

    /// The same URL without its query, for logs: venues put tokens in the query (Finnhub's `?token=`).
    public var redacted: String {
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        return "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)\(target.contains("?") ? "?…" : "")"
    }
}
