import CoinWatchRPC
import CoinWatchTLS
import Dispatch

/// Opens venue connections as `Connection`s in byte-stream mode on the feeds' event loop.
///
/// `Connection.connect` resolves the host name on the calling thread, so dialing starts on a dispatch queue (DNS
/// may take seconds; the loop must not wait for it); the connect itself, the reads and the writes then happen on
/// the loop.
///
/// `wss://`: TLS (CoinWatchTLS over OpenSSL) goes on the connection as a transform before it starts, so the
/// upgrade request queued at once waits inside the connection until the handshake is done. The session verifies
/// the certificate chain against the context's trust (the system store plus `--ca-file`) and the URL's host name
/// (or IP address); a handshake that fails closes the connection with OpenSSL's reason, which the source reports
/// and backs off from like any failed connection.
final class ConnectionDialer: FeedDialer {
    let loop: EventLoop
    let tls: TLSClientTransforms?
    let connectTimeout: Duration
    let handshakeTimeout: Duration
    let closeTimeout: Duration
    private static let resolver = DispatchQueue(label: "coinwatch.feeds.resolve", attributes: .concurrent)

    /// - Parameter tls: the client context for `wss://` URLs; nil refuses them.
    init(
        loop: EventLoop, tls: TLSContext? = nil, connectTimeout: Duration = .seconds(10),
        handshakeTimeout: Duration = .seconds(10), closeTimeout: Duration = .seconds(2)
    ) {
        self.loop = loop
        self.tls = tls.map { TLSClientTransforms(context: $0) }
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.closeTimeout = closeTimeout
    }

    func dial(
        _ url: WebSocketURL, delegate: any FeedTransportDelegate,
        completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void
    ) {
        let tls = url.isSecure ? self.tls : nil
        guard !url.isSecure || tls != nil else {
            completion(.failure(FeedDialError(kind: .tls, message: "wss:// without a TLS client context")))
            return
        }
        let loop = self.loop
        let timeout = connectTimeout
        let handshakeTimeout = self.handshakeTimeout
        let closeTimeout = self.closeTimeout
        // The completion and the delegate are loop-confined; they cross to the resolver thread and back untouched.
        let box = DialBox(delegate: delegate, completion: completion)
        Self.resolver.async {
            Connection.connect(host: url.host, port: url.port, on: loop, timeout: timeout) { result in
                loop.execute {
                    let delegate = box.delegate
                    let completion = box.completion
                    switch result {
                    case .success(let connection):
                        if let tls {
                            // The session is made on the loop that will own it (it is not Sendable).
                            do throws(IOError) {
                                let transform = try tls.makeClientTransform(host: url.host, port: url.port)
                                connection.startTransform(transform, handshakeTimeout: handshakeTimeout)
                            } catch {
                                connection.close()
                                completion(.failure(FeedDialError(
                                    kind: .tls, message: "cannot start TLS with \(url.hostHeader): \(error)")))
                                return
                            }
                        }
                        let transport = ConnectionTransport(
                            connection: connection, delegate: delegate, closeTimeout: closeTimeout)
                        transport.start()
                        completion(.success(transport))
                    case .failure(let error):
                        completion(.failure(FeedDialError(
                            kind: .connect, message: "cannot connect to \(url.hostHeader): \(error)")))
                    }
                }
            }
        }
    }
}

/// A dial's loop-confined callbacks, carried through the resolver thread without being used there. A class, not a
/// generic struct: a generic `@unchecked Sendable` struct holding these, captured across the two hops, came out of
/// the Swift 6.3 compiler releasing the delegate once too often.
final class DialBox: @unchecked Sendable {
    // @unchecked Sendable: only read back on the loop that created it.
    let delegate: any FeedTransportDelegate
    let completion: (Result<any FeedTransport, FeedDialError>) -> Void

    init(delegate: any FeedTransportDelegate, completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void) {
        self.delegate = delegate
        self.completion = completion
    }
}

/// A `Connection` in byte-stream mode as a venue's transport.
final class ConnectionTransport: FeedTransport, ByteStreamDelegate, EventLoopFlushHook {
    let connection: Connection
    weak var delegate: (any FeedTransportDelegate)?
    let closeTimeout: Duration
    /// Whether the loop will call `loopWillFlush` at the end of this iteration.
    private var readFinishAsked = false

    init(connection: Connection, delegate: any FeedTransportDelegate, closeTimeout: Duration) {
        self.connection = connection
        self.delegate = delegate
        self.closeTimeout = closeTimeout
    }

    func start() {
        connection.start(streamDelegate: self)
    }

    func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, connection.isOpen else { return }
        connection.enqueue(bytes)
    }

    func close(afterFlush: Bool) {
        if afterFlush {
            connection.close(afterFlush: closeTimeout)
        } else {
            connection.close()
        }
    }

    func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        delegate?.transport(self, received: bytes)
        // A readiness event hands over up to `Connection.readsPerEvent` socket reads, and over TLS one call per
        // record (16 KiB): the end of the loop's iteration is when all of them are in.
        if !readFinishAsked {
            readFinishAsked = true
            connection.eventLoop.flushBeforeWriting(self)
        }
    }

    func loopWillFlush() {
        readFinishAsked = false
        delegate?.transportReadFinished(self)
    }

    func inputEnded(on connection: Connection) {
        // The venue closed its side; whatever it sent is delivered. Close ours once our output is written.
        connection.close(afterFlush: closeTimeout)
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        delegate?.transport(self, closedWith: error.map { "\($0)" })
    }
}
