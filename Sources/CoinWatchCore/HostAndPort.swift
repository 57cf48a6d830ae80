/// `HOST:PORT` as an operator writes it: a name or an IPv4 address, or an IPv6 literal in brackets
/// (`[::1]:7878`). The one reading of an address for `--listen`, `--server`, the client's configuration and the
/// venues' URLs, so they accept and refuse the same text.
public struct HostAndPort: Sendable, Hashable, CustomStringConvertible {
    /// The host without brackets (`::1`).
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, or `HOST` alone when `defaultPort` is given.
    ///
    /// - Parameters:
    ///   - portZeroAllowed: whether port 0 (a listener's "any free port") is accepted; a peer's port is 1–65535.
    /// - Throws: `ParseError` saying what is wrong: no port, a port out of range, an empty host, an unclosed
    ///   bracket, or an IPv6 address without brackets (whose last group could not be told from a port).
    public init(parsing text: some StringProtocol, defaultPort: Int? = nil, portZeroAllowed: Bool = false) throws(ParseError) {
        let text = Substring(text)
        let hostText: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ParseError("'\(text)' opens an IPv6 address with [ and does not close it")
            }
            hostText = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ParseError("'\(text)' has '\(after)' after its ]") }
                portText = after.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            hostText = text[..<colon]
            guard !hostText.contains(":") else {
                throw ParseError("'\(text)': an IPv6 address goes in brackets, as in [::1]:7878")
            }
            portText = text[text.index(after: colon)...]
        } else {
            hostText = text
        }
        guard !hostText.isEmpty else {
            throw ParseError("'\(text)' has no host (0.0.0.0 or [::] stand for every address)")
        }
        let lowest = portZeroAllowed ? 0 : 1
        if let portText {
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText),
                  (lowest...65535).contains(port) else {
                throw ParseError("'\(text)': the port must be \(lowest)–65535 (got '\(portText)')")
            }
            self.init(host: String(hostText), port: port)
        } else if let defaultPort {
            self.init(host: String(hostText), port: defaultPort)
        } else {
            throw ParseError("'\(text)' is not HOST:PORT")
        }
    }

    /// `host:port`, the host in brackets when it is an IPv6 address.
    public var description: String { "\(hostText):\(port)" }

    /// The host as it is written in an address or a `Host` header: in brackets when it is an IPv6 address.
    public var hostText: String { host.contains(":") ? "[\(host)]" : host }

    /// Why a text is not an address; `message` quotes the text.
    public struct ParseError: CoinWatchError {
        /// The one kind: the text is not an address.
        public struct Code: ErrorCode {
            public let name: String

            private init(_ name: String) {
                self.name = name
            }

            public var description: String { name }

            /// Not `HOST:PORT` as described above.
            public static let invalidAddress = Code("invalidAddress")
        }

        public var code: Code { .invalidAddress }
        public let message: String

        init(_ message: String) {
            self.message = message
        }

        public var description: String { message }
    }
}
