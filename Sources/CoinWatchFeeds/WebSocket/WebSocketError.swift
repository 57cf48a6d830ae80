public import CoinWatchCore

/// Why a WebSocket connection failed or was refused, with the close code the client sent (or would send) for it.
public struct WebSocketError: CoinWatchError {
    public struct Code: ErrorCode {
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// The upgrade response was not a valid `101 Switching Protocols` for our request (wrong status, a missing or
        /// wrong `Upgrade`/`Connection` header, an extension or subprotocol we did not ask for, a header too large).
        public static let handshakeFailed = Code(name: "handshake_failed")
        /// `Sec-WebSocket-Accept` did not match the key we sent: not a WebSocket server, or a proxy in the way.
        public static let badAccept = Code(name: "bad_accept")
        /// HTTP 429 (or 503 with `Retry-After`) on the upgrade: the venue asks us to back off.
        public static let rateLimited = Code(name: "rate_limited")
        /// A frame broke RFC 6455 (reserved bits, unknown opcode, a masked server frame, a bad control frame or
        /// close code, a continuation out of place).
        public static let protocolError = Code(name: "protocol_error")
        /// A text message was not UTF-8.
        public static let invalidText = Code(name: "invalid_text")
        /// A message was longer than the configured maximum; its bytes past the frame header were never buffered.
        public static let messageTooBig = Code(name: "message_too_big")
        /// A message of a kind the endpoint does not take (a binary frame from a JSON venue).
        public static let unsupportedData = Code(name: "unsupported_data")

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The close code that goes with it (1002, 1007, 1009, 1003), or nil for handshake failures (no frames then).
    public var closeCode: UInt16?
    /// For `rateLimited`: the server's `Retry-After`, in seconds, when it sent one.
    public var retryAfterSeconds: Int?

    public init(code: Code, message: String, closeCode: UInt16? = nil, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.closeCode = closeCode
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String { "\(code): \(message)" }

    static func protocolViolation(_ message: String) -> WebSocketError {
        WebSocketError(code: .protocolError, message: message, closeCode: WebSocketCloseCode.protocolError)
    }
}

/// The close codes of RFC 6455 §7.4.1 this client sends or checks.
public enum WebSocketCloseCode {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    /// Reserved: "no status code was present"; never on the wire.
    public static let noStatus: UInt16 = 1005
    /// Reserved: "closed abnormally" (no close frame); never on the wire.
    public static let abnormal: UInt16 = 1006
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011

    /// Whether a peer may send `code` in a close frame: the defined codes 1000–1003, 1007–1014 (1012–1014 were
    /// registered with IANA after the RFC) and the application ranges 3000–4999. 1004–1006 and 1015 are reserved
    /// and must never appear on the wire.
    public static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
