extension RPCServer {
    /// Everything an operator can tune, with the defaults `docs/PROTOCOL.md` promises.
    public struct Configuration: Sendable {
        /// Address to bind; port 0 picks a free port (read it back from `RPCServer.port`).
        public var host = "127.0.0.1"
        public var port = 7878
        /// Event-loop threads; connections are spread across them.
        public var eventLoopThreads = EventLoopGroup.defaultThreadCount
        /// Largest frame body accepted, announced in `Welcome`.
        public var maxFrameBytes = 4 << 20
        /// Connections beyond this are refused with RESOURCE_EXHAUSTED.
        public var maxConnections = 16_384
        /// Live calls per connection beyond this end RESOURCE_EXHAUSTED.
        public var maxConcurrentCallsPerConnection = 1_024
        /// A connection must complete its `Hello` within this.
        public var handshakeTimeout: Duration = .seconds(10)
        /// A connection that sends nothing for this long is closed; `.zero` = never.
        public var idleTimeout: Duration = .seconds(300)
        /// Outbound bytes queued above which a connection stops being writable:
        /// streams conflate and the server stops reading the connection's requests.
        public var highWatermark = 1 << 20
        /// Outbound bytes at or below which a connection is writable again.
        public var lowWatermark = 256 << 10
        /// A connection that stays above its high watermark this long is closed.
        public var slowConsumerTimeout: Duration = .seconds(10)
        /// How long in-flight unary calls may run after a graceful shutdown begins.
        public var shutdownGracePeriod: Duration = .seconds(10)
        /// Pings allowed in a burst before the rate limit applies.
        public var pingBurst = 20
        /// Sustained pings per second allowed; beyond it the connection gets GoAway.
        public var pingsPerSecond = 1.0
        /// TLS on this listener: a connection whose first bytes are a TLS handshake record gets a transform from
        /// here, and its negotiated ALPN steers it like its first bytes would; with `requiresTransform`, a
        /// connection that starts in plaintext is refused. nil: plaintext only (a TLS handshake is refused).
        public var tls: (any ServerTransformFactory)?
        /// Names announced in `Welcome`.
        public var serverName = "coinwatchd"
        public var serverVersion = "0.0.0"

        public init() {}
    }
}
