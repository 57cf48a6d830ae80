/// A connected byte stream to a venue: TCP, or TLS over TCP. Loop-confined, like the source that owns it.
protocol FeedTransport: AnyObject {
    /// Queues bytes; they leave at the end of the loop's current iteration.
    func send(_ bytes: [UInt8])
    /// Closes: after writing what is queued (waiting a bounded time for the peer to finish), or at once.
    func close(afterFlush: Bool)
}

/// What a transport reports to its source, on the loop.
protocol FeedTransportDelegate: AnyObject {
    /// Bytes from the venue, valid only during the call.
    func transport(_ transport: any FeedTransport, received bytes: UnsafeRawBufferPointer)
    /// Everything the socket had when the loop last looked is handed over (one or more `received` calls, e.g. one
    /// per TLS record): what is to be done once per batch of reads rather than once per read.
    func transportReadFinished(_ transport: any FeedTransport)
    /// The transport closed (reported once); `reason` says why when it was not an orderly close.
    func transport(_ transport: any FeedTransport, closedWith reason: String?)
}

/// Why a connection could not be made.
struct FeedDialError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        /// Name resolution, refused, unreachable, timed out.
        case connect
        /// The TLS handshake failed: a certificate that does not verify, a wrong host name, no common protocol.
        case tls
    }

    var kind: Kind
    var message: String

    var description: String { message }
}

/// Opens transports to venues.
protocol FeedDialer: AnyObject {
    /// Connects to `url`'s host and port (with TLS for `wss://`, verifying the certificate and the host name) and
    /// calls `completion` on the loop with a transport that reports to `delegate`.
    func dial(
        _ url: WebSocketURL, delegate: any FeedTransportDelegate,
        completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void)
}
