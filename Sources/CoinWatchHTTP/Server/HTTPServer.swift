public import CoinWatchConnect
public import CoinWatchLogging
public import CoinWatchMetrics
public import CoinWatchRPC

/// HTTP on the RPC server's port: gRPC over HTTP/2 (prior-knowledge h2c) and the Connect protocol over HTTP/1.1
/// and HTTP/2, served by the same dispatcher as the native protocol; the web dashboard at `/`; and the
/// operators' endpoints (`/metrics`, `/healthz`, `/readyz`).
///
/// ```swift
/// let server = try RPCServer(configuration: rpc, methods: methods)
/// let http = HTTPServer(rpc: server, configuration: .init(metrics: registry, isServing: { service.health.isServing }))
/// try server.start()   // native, HTTP/1.1 and HTTP/2 on one port
/// ```
///
/// The native connection recognises HTTP from its first bytes and hands the connection here
/// (`ProtocolHandoff`); `HTTPConnectionHandler` then picks HTTP/2 or HTTP/1.1.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        /// What `GET /metrics` renders.
        public var metrics: MetricsRegistry
        /// Whether the service is serving (`/healthz`, `/readyz`).
        public var isServing: @Sendable () -> Bool
        /// A request must be complete this long after its first byte (HTTP/1.1), and a connection must show
        /// which HTTP it speaks this long after it opened.
        public var requestTimeout: Duration = .seconds(10)
        /// Which other origins' pages may call the server from a browser (`--cors-origin`); none by default.
        public var cors = CORSPolicy(allowedOrigins: [])
        var http1Limits = HTTP1Parser.Limits()
        public var http2 = HTTP2Limits()

        public init(metrics: MetricsRegistry, isServing: @escaping @Sendable () -> Bool) {
            self.metrics = metrics
            self.isServing = isServing
        }
    }

    /// HTTP/2's bounds and abuse limits.
    public struct HTTP2Limits: Sendable {
        var session = NGHTTP2Session.Settings()
        /// A stream's queued response bytes above which its call is not writable (streams conflate), and at or
        /// below which it is writable again.
        public var streamHighWatermark = 256 << 10
        public var streamLowWatermark = 64 << 10
        /// PING and SETTINGS frames (each) a client may send in a burst, and per second after it.
        public var controlFrameBurst = 50
        public var controlFramesPerSecond = 10.0

        /// Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
        public var maxConcurrentStreams: UInt32 {
            get { session.maxConcurrentStreams }
            set { session.maxConcurrentStreams = newValue }
        }

        /// The largest request header block accepted (SETTINGS_MAX_HEADER_LIST_SIZE, enforced).
        public var maxHeaderListSize: UInt32 {
            get { session.maxHeaderListSize }
            set { session.maxHeaderListSize = newValue }
        }

        public init() {}
    }

    /// The `transport` label of calls that came over gRPC.
    static let grpcTransportName = "grpc"

    public let configuration: Configuration
    /// Weak: the RPC server keeps this one as its handler of other protocols (`serveOtherProtocols`), so it owns
    /// it; a strong reference back would keep both, their event loops and their dispatcher alive once everyone
    /// else let them go. Its settings are copied (`rpcConfiguration`) for the connections to read.
    weak let rpc: RPCServer?
    /// The RPC server's configuration: the frame limit, watermarks and timeouts HTTP connections share with it.
    let rpcConfiguration: RPCServer.Configuration
    let dispatcher: CallDispatcher
    let grpc: CallTransport
    let connect: CallTransport
    let connectMethods = ConnectMethods()
    let http1Connections: ConnectionCount
    let http2Connections: ConnectionCount
    let endpoints: OperatorEndpoints
    let logger: Logger

    /// Serves HTTP on `rpc`'s port from now on (call before `rpc.start()`).
    public init(rpc: RPCServer, configuration: Configuration, logger: Logger = .disabled) {
        self.configuration = configuration
        self.rpc = rpc
        self.rpcConfiguration = rpc.configuration
        self.dispatcher = rpc.dispatcher
        self.logger = logger
        grpc = dispatcher.transport(Self.grpcTransportName)
        connect = dispatcher.transport(Self.connectTransportName)
        http1Connections = dispatcher.connections("http1")
        http2Connections = dispatcher.connections("http2")
        endpoints = OperatorEndpoints(metrics: configuration.metrics, isServing: configuration.isServing,
                                      isShuttingDown: { [weak rpc] in rpc?.isShuttingDown ?? true })
        rpc.serveOtherProtocols(self)
    }
}

extension HTTPServer {
    /// Loop: serves an HTTP connection this server did not sniff itself — one a TLS layer hands over once
    /// ALPN has chosen `h2` or `http/1.1` (or `.detect` to sniff the decrypted bytes as on plaintext). The
    /// connection must not be started; it is tracked by the RPC server like its own (limit, drain).
    package func serve(_ connection: Connection, peer: String, protocol: HTTPConnectionHandler.WireProtocol) {
        let handler = HTTPConnectionHandler(connection: connection, server: self, peer: peer, protocol: `protocol`)
        guard let rpc, rpc.adopt(handler) else {
            handler.abandon()
            connection.close()
            return
        }
        connection.start(streamDelegate: handler, options: ConnectionOptions(
            maxFrameBytes: rpcConfiguration.maxFrameBytes, highWatermark: rpcConfiguration.highWatermark,
            lowWatermark: rpcConfiguration.lowWatermark))
    }
}

extension HTTPServer: ProtocolHandoff {
    package func handler(for connection: Connection, peer: String) -> (any ByteStreamDelegate & ServedConnection)? {
        HTTPConnectionHandler(connection: connection, server: self, peer: peer)
    }
}
