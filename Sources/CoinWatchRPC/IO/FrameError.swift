public import CoinWatchCore

/// Why a byte stream could not be split into frames. Decoding cannot resume after one: the
/// stream position is lost, so the connection must be closed (after an optional error reply).
public struct FrameError: CoinWatchError {
    /// What went wrong. A struct rather than an enum so new codes are not a breaking change.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// A length prefix of 0: every frame carries at least its envelope.
        public static let zeroLength = Code("zeroLength")
        /// A length prefix above the decoder's limit; rejected before anything is allocated.
        public static let tooLarge = Code("tooLarge")
        /// The first bytes of the connection are an HTTP request line or the HTTP/2 preface
        /// (`GET `, `POST`, `PRI `, …): a browser, curl or gRPC client on the wrong port.
        public static let httpRequest = Code("httpRequest")
        /// The first bytes of the connection are a TLS handshake record (`0x16 0x03 …`): a client speaking
        /// TLS to a plaintext endpoint, or a TLS listener's connection before its handshake.
        public static let tlsHandshake = Code("tlsHandshake")
    }

    public let code: Code
    /// A sentence for logs and for the error frame sent to the peer.
    public let message: String
    /// The length the prefix announced.
    public let declaredLength: UInt32
    /// The decoder's limit.
    public let maxFrameBytes: Int
    /// The four prefix bytes as received (for `httpRequest`, the start of the request line; for
    /// `tlsHandshake`, the record header's type, version and the first byte of its length).
    public let prefix: [UInt8]

    public var description: String { "\(code): \(message)" }

    static func zeroLength(limit: Int) -> FrameError {
        FrameError(code: .zeroLength, message: "frame length 0 is not allowed", declaredLength: 0,
                   maxFrameBytes: limit, prefix: [0, 0, 0, 0])
    }

    static func tooLarge(_ length: UInt32, limit: Int) -> FrameError {
        FrameError(code: .tooLarge, message: "frame length \(length) exceeds the limit of \(limit) bytes",
                   declaredLength: length, maxFrameBytes: limit, prefix: FrameEncoder.header(bodyLength: Int(length)))
    }

    static func httpRequest(_ length: UInt32, limit: Int) -> FrameError {
        let prefix = FrameEncoder.header(bodyLength: Int(length))
        let text = String(decoding: prefix, as: UTF8.self)
        return FrameError(code: .httpRequest,
                          message: "received an HTTP request (\"\(text)…\") on a framed-protocol connection",
                          declaredLength: length, maxFrameBytes: limit, prefix: prefix)
    }

    static func tlsHandshake(_ length: UInt32, limit: Int) -> FrameError {
        FrameError(code: .tlsHandshake, message: "received a TLS handshake on a plaintext framed-protocol connection",
                   declaredLength: length, maxFrameBytes: limit, prefix: FrameEncoder.header(bodyLength: Int(length)))
    }
}
