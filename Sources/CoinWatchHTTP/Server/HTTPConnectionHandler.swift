package import CoinWatchRPC

/// A connection of the server's port that speaks HTTP: decides between HTTP/2 and HTTP/1.1 from its first
/// bytes and hands them to the session that speaks it.
///
/// This is the one place that picks an HTTP protocol. A plaintext connection arrives here from the native
/// connection's sniff (`ProtocolHandoff`) with every byte from the first replayed; a TLS layer calls
/// `init(connection:server:peer:protocol:)` with the protocol ALPN chose (`h2`, `http/1.1`), or `.detect` to
/// sniff the decrypted bytes the same way.
package final class HTTPConnectionHandler: ByteStreamDelegate, ServedConnection {
    /// What the connection speaks, when known before the first byte.
    package enum WireProtocol {
        case detect
        case http1
        case http2
    }

    private enum Engine {
        /// Waiting for enough bytes to tell the HTTP/2 preface from an HTTP/1.1 request line.
        case sniffing([UInt8])
        case http1(HTTP1Session)
        case http2(HTTP2Connection)
        case closed
    }

    let connection: Connection
    let server: HTTPServer
    let peer: String
    private var engine: Engine
    /// While sniffing: a connection that does not show which HTTP it speaks within the request timeout closes.
    private var sniffTimer: TimerHandle?

    package var eventLoop: EventLoop { connection.eventLoop }

    /// Never started (the server refused it): stop the timers and counts the handler began.
    func abandon() {
        endEngine()
    }

    /// The connection is done: cancels the sniff timer, ends the session, uncounts it.
    private func endEngine() {
        if let timer = sniffTimer {
            connection.eventLoop.cancelTimer(timer)
            sniffTimer = nil
        }
        switch engine {
        case .http1(let session):
            session.closed()
            server.http1Connections.closed()
        case .http2(let session):
            session.closed()
            server.http2Connections.closed()
        case .sniffing, .closed:
            break
        }
        engine = .closed
    }

    init(connection: Connection, server: HTTPServer, peer: String, protocol: WireProtocol = .detect) {
        self.connection = connection
        self.server = server
        self.peer = peer
        engine = .sniffing([])
        switch `protocol` {
        case .detect:
            // Unowned: the timer is cancelled when the engine is chosen or the connection closes.
            sniffTimer = connection.eventLoop.scheduleTimer(after: server.configuration.requestTimeout) { [unowned self] in
                sniffTimer = nil
                if case .sniffing = engine { connection.close() }
            }
        case .http1: start(http2: false)
        case .http2: start(http2: true)
        }
    }

    private func start(http2: Bool) {
        if let timer = sniffTimer {
            connection.eventLoop.cancelTimer(timer)
            sniffTimer = nil
        }
        if http2 {
            server.http2Connections.opened()
            engine = .http2(HTTP2Connection(connection: connection, server: server, peer: peer))
        } else {
            server.http1Connections.opened()
            engine = .http1(HTTP1Session(connection: connection, server: server, peer: peer))
        }
    }

    package func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        switch engine {
        case .http1(let session):
            session.received(bytes)
        case .http2(let session):
            session.received(bytes)
        case .closed:
            break
        case .sniffing(var buffered):
            buffered.append(contentsOf: bytes)
            let compared = min(buffered.count, HTTP2RawFrames.preface.count)
            if buffered.prefix(compared).elementsEqual(HTTP2RawFrames.preface.prefix(compared)) {
                guard buffered.count >= HTTP2RawFrames.preface.count else {
                    engine = .sniffing(buffered)
                    return
                }
                start(http2: true)
            } else {
                start(http2: false)
            }
            buffered.withUnsafeBytes { self.bytesReceived($0, on: connection) }
        }
    }

    package func writabilityChanged(_ isWritable: Bool, on connection: Connection) {
        switch engine {
        case .http1(let session): session.writabilityChanged(isWritable)
        case .http2(let session): session.writabilityChanged(isWritable)
        case .sniffing, .closed: break
        }
    }

    package func inputEnded(on connection: Connection) {
        switch engine {
        case .http2(let session): session.inputEnded()
        case .http1(let session): session.inputEnded()
        default: connection.close(afterFlush: .seconds(2))
        }
    }

    package func connectionClosed(_ connection: Connection, error: IOError?) {
        endEngine()
        server.rpc?.connectionClosed(self)
    }

    package func beginDrain() {
        switch engine {
        case .http1(let session): session.beginDrain()
        case .http2(let session): session.beginDrain()
        case .sniffing: connection.close()
        case .closed: break
        }
    }

    package func forceClose() {
        switch engine {
        case .http2(let session): session.forceClose()
        default: connection.close()
        }
    }
}
