import CoinWatchCore
import CoinWatchLogging
import CoinWatchProto
import Synchronization

/// The server side of one connection: handshake, calls, keepalive and limits.
///
/// Lives on its connection's event loop and is touched only there, so none of
/// its state needs a lock. `docs/PROTOCOL.md` is the specification of what it does.
/// This file holds its state and the connection's events; the facets live beside it:
/// `+Handshake`, `+Calls` (admission, the call table, inline calls), `+Keepalive`
/// (pings, idle), `+Shutdown` (drain, connection errors) and `+Output` (frame writers).
final class ServerConnection: ConnectionDelegate, ServedConnection {
    enum State {
        /// Waiting for the client's `Hello`.
        case awaitingHello
        /// Serving calls.
        case ready
        /// `GoAway` sent: finishing accepted calls, refusing new ones.
        case draining
        /// A fatal error was sent or the socket closed; nothing more is processed.
        case closed
    }

    let connection: Connection
    let eventLoop: EventLoop
    let shared: ServerShared
    let peer: String
    /// What every transport shares: methods, limits, authorization, deadlines.
    let dispatcher: CallDispatcher
    /// The native transport's metrics on this connection's loop.
    let metrics: LoopCallMetrics
    var state = State.awaitingHello
    var calls: [UInt64: ServerCall] = [:]
    var handshakeTimer: TimerHandle?
    var idleTimer: TimerHandle?
    var slowConsumerTimer: TimerHandle?
    /// The grace a half-closed connection's running calls get to finish (`inputEnded`).
    var halfCloseTimer: TimerHandle?
    var lastFrameNanos: Int64
    var highestCallID: UInt64 = 0
    var authToken = ""
    /// Counted by the server's `ConnectionAdmission`, which is told when the connection closes.
    var isAdmitted = false
    /// Why the connection was refused when it was accepted, answered once its first bytes arrive (`+Refusal`).
    var refusal: RPCError?
    /// The TLS of the listener that accepted the connection; nil: plaintext only.
    let tls: (any ServerTransformFactory)?
    /// The subject of the client's verified TLS certificate, read once when the handshake ends; empty without.
    var peerIdentity = ""
    var pingTokens: Double
    var pingRefillNanos: Int64
    /// Per method (indexed like `dispatcher.methods`), filled on first use: the handler
    /// of an inline method and the context shared by its calls that carry no metadata
    /// and no deadline (see `InlineMethod`).
    var inlineMethods: [InlineMethod?] = []

    init(connection: Connection, shared: ServerShared, tls: (any ServerTransformFactory)?) {
        self.connection = connection
        self.tls = tls
        self.eventLoop = connection.eventLoop
        self.shared = shared
        self.peer = connection.peerAddress() ?? "unknown"
        self.dispatcher = shared.dispatcher
        self.metrics = shared.nativeTransport.metrics(for: connection.eventLoop)
        self.lastFrameNanos = MonotonicClock.nanoseconds()
        self.pingTokens = Double(shared.configuration.pingBurst)
        self.pingRefillNanos = lastFrameNanos
    }

    var configuration: RPCServer.Configuration { shared.configuration }

    /// Loop: starts the handshake timer. Called right after `Connection.start`.
    func started() {
        // Timers capture `self` unowned: every timer is cancelled in connectionClosed,
        // which runs before the connection can be released, and a weak capture would
        // give this object a side table (slow reference counting on every call).
        handshakeTimer = eventLoop.scheduleTimer(after: configuration.handshakeTimeout) { [unowned self] in
            guard self.state == .awaitingHello else { return }
            self.fail(.deadlineExceeded, "no Hello within \(self.configuration.handshakeTimeout.inMilliseconds) ms")
        }
    }

    // MARK: ConnectionDelegate

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        guard state != .closed else { return }
        lastFrameNanos = eventLoop.iterationNanoseconds()
        if state != .awaitingHello, let fast = FrameReader.read(body), case .call(let id, let path, let timeout, let payload) = fast,
           let index = dispatcher.methods.index(path: path) {
            if timeout == 0, state == .ready, let inline = inlineMethod(index) {
                guard admit(id: id) else { return }
                highestCallID = max(highestCallID, id)
                dispatcher.runInline(index, id: id, handler: inline.handler, context: inline.context, payload: payload,
                                     metrics: metrics, sink: self)
                return
            }
            startCall(id: id, method: index, path: dispatcher.methods[index].path, timeoutMs: timeout, metadata: [:],
                      payload: payload)
            return
        }
        if state == .awaitingHello, let refusal {
            // Refused at accept: whatever the first frame is, the answer is the refusal.
            fail(refusal.code, refusal.message)
            return
        }
        let frame: V1.Frame
        do {
            frame = try V1.Frame(serializedBytes: body, maxBytes: configuration.maxFrameBytes)
        } catch {
            fail(.invalidArgument, "frame is not a valid coinwatch.v1.Frame: \(error.message)")
            return
        }
        guard let kind = frame.kind else {
            // A valid Frame with none of this version's kinds carries a kind a later version added (an empty
            // Frame is zero bytes, the zero-length error). Ignored, so new kinds never break old servers; only
            // the first frame must be one this server knows, a Hello.
            if state == .awaitingHello {
                fail(.failedPrecondition, "the first frame must be Hello, got a frame of a kind this server does not know")
            } else {
                shared.logger.debug("ignored a frame of an unknown kind", ["peer": peer])
            }
            return
        }
        if state == .awaitingHello {
            if refusesPlaintext {
                fail(.failedPrecondition, "this listener accepts TLS connections only")
                return
            }
            handshake(kind)
            return
        }
        switch kind {
        case .call(let call):
            call.payload.withUnsafeBytes { payload in
                startCall(id: call.callID, method: dispatcher.methods.index(path: call.method), path: call.method,
                          timeoutMs: call.timeoutMs, metadata: call.metadata, payload: payload)
            }
        case .cancel(let cancel):
            calls[cancel.callID]?.terminate(RPCError(code: .cancelled, message: "cancelled by the client"), sendEnd: true)
        case .ping(let ping):
            answerPing(ping)
        case .pong:
            break
        case .hello:
            fail(.failedPrecondition, "Hello may only be sent once")
        case .error(let error):
            shared.logger.debug("peer reported a connection error", ["peer": peer, "code": "\(error.code)", "message": error.message])
            closeNow()
        case .welcome, .message, .end, .goAway:
            fail(.invalidArgument, "a client may not send \(Self.name(of: kind)) frames")
        }
    }

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        if let refusal, state == .awaitingHello {
            answerRefusal(refusal, firstBytes: error)
            return
        }
        if error.code == .httpRequest, state == .awaitingHello {
            // Before the handoff: HTTP in plaintext on a TLS-only listener would carry its credentials in clear
            // and skip a required client certificate.
            if refusesPlaintext {
                shared.counters.rejectedConnections.add(1, ordering: .relaxed)
                answer(Self.tlsOnlyHTTPReply)
                return
            }
            if handOff(connection) { return }
        }
        if error.code == .tlsHandshake, let tls, connection.transform == nil {
            startTLS(tls)
            return
        }
        shared.counters.rejectedConnections.add(1, ordering: .relaxed)
        if error.code == .httpRequest {
            answerHTTP()
            return
        }
        let code: RPCError.Code = error.code == .tooLarge ? .resourceExhausted : .invalidArgument
        fail(code, error.message)
    }

    /// Gives a connection that opened with HTTP to the server's handoff, if it takes it: the handler becomes
    /// the connection's byte-stream delegate (and hears every byte from the first) and takes this object's
    /// place among the server's connections. False when there is no handoff or it declined.
    func handOff(_ connection: Connection) -> Bool {
        guard let handoff = shared.handoff.withLock({ $0 }),
              let handler = handoff.handler(for: connection, peer: peer) else { return false }
        if let timer = handshakeTimer {
            _ = eventLoop.cancelTimer(timer)
            handshakeTimer = nil
        }
        state = .closed
        shared.handedOff(self, to: handler)
        connection.switchToByteStream(handler)
        return true
    }

    func writabilityChanged(_ isWritable: Bool, on connection: Connection) {
        if isWritable {
            connection.resumeInput()
            if let timer = slowConsumerTimer {
                _ = eventLoop.cancelTimer(timer)
                slowConsumerTimer = nil
            }
            for call in Array(calls.values) { call.becameWritable() }
        } else {
            // Stop taking new requests while replies pile up: TCP holds the peer back.
            connection.pauseInput()
            guard slowConsumerTimer == nil else { return }
            slowConsumerTimer = eventLoop.scheduleTimer(after: configuration.slowConsumerTimeout) { [unowned self] in
                self.slowConsumerTimer = nil
                guard !self.connection.isWritable, self.state != .closed else { return }
                let message = "outbound queue stayed above \(self.configuration.highWatermark) bytes for "
                    + "\(self.configuration.slowConsumerTimeout.inMilliseconds) ms; the client is not reading"
                self.shared.logger.notice("closing slow consumer", ["peer": self.peer, "queued": "\(self.connection.queuedBytes)"])
                self.fail(.resourceExhausted, message, flush: false)
            }
        }
    }

    func inputEnded(on connection: Connection) {
        // The peer will send nothing more, but it may have only shut its writing side down and still read: a
        // client that sends its last requests and then `shutdown(SHUT_WR)` gets their answers. Unary calls
        // finish and are answered (nothing could cancel them now but their deadline), streams end, and the
        // connection closes once the last call has.
        switch state {
        case .ready, .draining:
            state = .draining
            for call in Array(calls.values) where call.isStreaming {
                call.terminate(RPCError(code: .cancelled, message: "the client closed its side"), sendEnd: true)
            }
            closeWhenDrained()
            guard state != .closed, halfCloseTimer == nil else { return }
            // Bounded like a shutdown's drain: a call that would never end (no deadline, a handler that holds it)
            // does not keep the connection.
            halfCloseTimer = eventLoop.scheduleTimer(after: configuration.shutdownGracePeriod) { [unowned self] in
                self.halfCloseTimer = nil
                guard self.state == .draining else { return }
                self.terminateCalls(
                    sendEnd: true,
                    reason: RPCError(code: .unavailable, message: "the client closed its side before the call finished"))
                self.state = .closed
                self.connection.close(afterFlush: .seconds(2))
            }
        case .awaitingHello, .closed:
            terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the client closed its side"))
            state = .closed
            connection.close(afterFlush: .seconds(5))
        }
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        if state != .closed {
            state = .closed
        }
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        for timer in [handshakeTimer, idleTimer, slowConsumerTimer, halfCloseTimer].compactMap({ $0 }) {
            _ = eventLoop.cancelTimer(timer)
        }
        handshakeTimer = nil
        idleTimer = nil
        slowConsumerTimer = nil
        halfCloseTimer = nil
        shared.connectionClosed(self)
    }

    // MARK: Helpers

    static let httpReply =
        "coinwatchd speaks the CoinWatch protocol (length-prefixed protobuf frames), not HTTP; see docs/PROTOCOL.md\n"

    /// The answer to plaintext HTTP on a TLS-only listener: an HTTP/1.1 response an HTTP/1.1 client can show (an
    /// HTTP/2 client sees the connection close).
    static let tlsOnlyHTTPReply = {
        let body = "this listener accepts TLS connections only: use https://\n"
        return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + body
    }()

    static func name(of kind: V1.Frame.Kind) -> String {
        switch kind {
        case .hello: "Hello"
        case .welcome: "Welcome"
        case .call: "Call"
        case .message: "Message"
        case .end: "End"
        case .cancel: "Cancel"
        case .ping: "Ping"
        case .pong: "Pong"
        case .goAway: "GoAway"
        case .error: "ConnectionError"
        }
    }
}
