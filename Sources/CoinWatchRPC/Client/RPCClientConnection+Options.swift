extension RPCClientConnection {
    /// How a client connects and keeps its connection healthy.
    public struct Options: Sendable {
        /// Sent in `Hello` for the server's logs.
        public var clientName = "coinwatch-client"
        /// Sent in `Hello`; servers with a publish token require it for `PublishPrices`.
        public var authToken = ""
        /// Bounds TCP connect plus handshake.
        public var connectTimeout: Duration = .seconds(10)
        /// How often to ping; `.zero` turns keepalive off.
        public var keepaliveInterval: Duration = .seconds(30)
        /// A `Pong` later than this marks the connection dead: its calls fail UNAVAILABLE.
        public var keepaliveTimeout: Duration = .seconds(10)
        /// Largest frame accepted from the server.
        public var maxFrameBytes = 4 << 20
        /// TLS (or another transform) for the connection; nil: plaintext. Its handshake counts against
        /// `connectTimeout`.
        public var transform: (any ClientTransformFactory)?

        public init() {}
    }
}
