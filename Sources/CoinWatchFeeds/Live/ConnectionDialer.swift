import CoinWatchRPC
import Dispatch

/// Opens venue connections as `Connection`s in byte-stream mode on the feeds' event loop.
///
/// `Connection.connect` resolves the host name on the calling thread, so dialing starts on a dispatch queue (DNS
/// may take seconds; the loop must not wait for it); the connect itself, the reads and the writes then happen on
/// the loop.
final class ConnectionDialer: FeedDialer {
    let loop: EventLoop
    let connectTimeout: Duration
    let closeTimeout: Duration
    private static let resolver = DispatchQueue(label: "coinwatch.feeds.resolve", attributes: .concurrent)

    init(loop: EventLoop, connectTimeout: Duration = .seconds(10), closeTimeout: Duration = .seconds(2)) {
        self.loop = loop
        self.connectTimeout = connectTimeout
        self.closeTimeout = closeTimeout
    }

    func dial(
        _ url: WebSocketURL, delegate: any FeedTransportDelegate,
        completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void
    ) {
        guard !url.isSecure else {
            completion(.failure(FeedDialError(kind: .tls, message: "wss:// needs TLS, which this build lacks")))
            return
        }
        let loop = self.loop
        let timeout = connectTimeout
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
final class ConnectionTransport: FeedTransport, ByteStreamDelegate {
    let connection: Connection
    weak var delegate: (any FeedTransportDelegate)?
    let closeTimeout: Duration

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
    }

    func inputEnded(on connection: Connection) {
        // The venue closed its side; whatever it sent is delivered. Close ours once our output is written.
        connection.close(afterFlush: closeTimeout)
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        delegate?.transport(self, closedWith: error.map { "\($0)" })
    }
}
