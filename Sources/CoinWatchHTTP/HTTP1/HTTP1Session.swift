import CoinWatchConnect
import CoinWatchCore
import CoinWatchLogging
import CoinWatchRPC

/// HTTP/1.1 on one connection: keep-alive, pipelined requests answered in order, slow requests timed out.
///
/// Loop-confined, owned by its `HTTPConnectionHandler`. Each complete request gets an `HTTP1Exchange` in
/// `exchanges`, in the order it arrived; responses leave strictly in that order. An exchange is answered at
/// once (the operators' endpoints, the dashboard, refusals) or by a Connect call, later and possibly as a
/// stream; a later exchange's answer waits in its buffer until those before it are complete. At most
/// `maxPipelined` requests wait at once: beyond that the connection stops reading, so a client that pipelines
/// without reading holds only what TCP holds.
final class HTTP1Session {
    static let maxPipelined = 32

    let connection: Connection
    let server: HTTPServer
    let peer: String
    private var parser: HTTP1Parser
    /// The requests one read completed, kept between reads so that a read does not allocate the array.
    private var parsed: [HTTP1Request] = []
    /// Unanswered (or still streaming) requests, oldest first; the first is the active one.
    private var exchanges: [HTTP1Exchange] = []
    /// A response with `Connection: close` was queued (or the parser failed): nothing more is read or answered.
    private var closing = false
    private var draining = false
    private var requestTimer: TimerHandle?
    private var idleTimer: TimerHandle?
    /// When bytes last arrived, or the idle timer last found a request being answered: the timer, armed once,
    /// compares against it when it fires rather than being moved on every read.
    private var lastActivityNanos = MonotonicClock.nanoseconds()
    private var slowConsumerTimer: TimerHandle?
    /// The exchange that finished last, for the next request to reuse if nothing else holds it by then (a call's
    /// sink releases its exchange only after the answer is written).
    private var finished: HTTP1Exchange?
    /// The buffer answers are built in before they are copied into the connection's output.
    private var scratch: [UInt8] = []
    /// The last request's head and what it decided, for a next request with the same head.
    private var lastHead: HTTP1HeadDecision?

    init(connection: Connection, server: HTTPServer, peer: String) {
        self.connection = connection
        self.server = server
        self.peer = peer
        var limits = server.configuration.http1Limits
        // A Connect request carries one message (in its envelope when streaming): the body may be that large,
        // so that a message over the limit is answered resource_exhausted the way Connect clients read.
        limits.maxBodyBytes = max(limits.maxBodyBytes, server.maxConnectBodyBytes)
        self.parser = HTTP1Parser(limits: limits)
        scheduleIdle()
    }

    // MARK: Input

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !closing else { return }
        lastActivityNanos = MonotonicClock.nanoseconds()
        var failure: HTTP1ParseError?
        do {
            try parser.parse(bytes, into: &parsed)
        } catch {
            failure = error
        }
        for index in parsed.indices where !closing {
            if handle(parsed[index]) {
                parser.recycle(&parsed[index])
            } else {
                // A stream holds the connection for as long as it runs (a dashboard's, for days): what the parser
                // keeps to make the next request cheaper is let go, so an open stream costs only itself.
                parser.forgetRecycled()
                lastHead = nil
            }
        }
        parsed.removeAll(keepingCapacity: true)
        if let failure, !closing {
            server.logger.debug("refused an HTTP/1.1 request", ["peer": peer, "status": "\(failure.status)", "reason": failure.message])
            let exchange = add(isHead: false, isHTTP10: false, close: true)
            exchange.respond(.text(failure.status, failure.message))
        }
        if parser.awaitsContinue && !closing && exchanges.isEmpty {
            // The client holds its body back until told to go on. Only when no earlier answer is due: an interim
            // answer may not overtake them, and a client that gets none sends its body after a pause anyway.
            parser.awaitsContinue = false
            connection.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        updateTimers()
    }

    /// Starts answering `request`; false when its answer is a stream.
    private func handle(_ request: HTTP1Request) -> Bool {
        let decision = decide(request)
        let exchange = add(isHead: request.method == "HEAD", isHTTP10: request.minorVersion == 0,
                           close: !decision.keepAlive || draining)
        if let connect = decision.connect {
            exchange.sink = server.startConnect(connect, body: request.body, responder: exchange,
                                                eventLoop: connection.eventLoop, peer: peer,
                                                peerIdentity: connection.transform?.peerIdentity ?? "")
        } else {
            exchange.respond(server.plainResponse(decision.route, method: request.method, path: request.target.path,
                                                  header: { request.header($0) }))
        }
        return exchange.sink?.call?.isStreaming != true
    }

    /// What `request`'s head decides: the last request's decision when the head is the same.
    private func decide(_ request: HTTP1Request) -> HTTP1HeadDecision {
        if let lastHead, lastHead.decides(request) { return lastHead }
        let decision = HTTP1HeadDecision(request, server: server)
        lastHead = request.headers.count <= HTTP1HeadDecision.maxKeptFields ? decision : nil
        return decision
    }

    // MARK: Output

    /// A new exchange at the end of the pipeline (active at once when it is the only one).
    private func add(isHead: Bool, isHTTP10: Bool, close: Bool) -> HTTP1Exchange {
        let exchange: HTTP1Exchange
        if finished != nil, isKnownUniquelyReferenced(&finished!), let reused = finished, reused.isReusable {
            reused.reuse(isHead: isHead, isHTTP10: isHTTP10, closeAfter: close)
            exchange = reused
        } else {
            exchange = HTTP1Exchange(session: self, isHead: isHead, isHTTP10: isHTTP10, closeAfter: close)
        }
        finished = nil
        if close { closing = true }
        exchanges.append(exchange)
        if exchanges.count == 1 { exchange.activate() }
        if exchanges.count >= Self.maxPipelined { connection.pauseInput() }
        return exchange
    }

    /// `exchange` has written its whole answer: the next ones take their turn, in order.
    func exchangeCompleted(_ exchange: HTTP1Exchange) {
        guard exchange.isActive else { return }  // it leaves when those before it are done
        while let first = exchanges.first, first.isComplete {
            exchanges.removeFirst()
            finished = first
            if first.closeAfter || (draining && exchanges.isEmpty && !parser.isInsideRequest) {
                close(afterFlush: true)
                return
            }
            exchanges.first?.activate()
        }
        if exchanges.count < Self.maxPipelined && connection.isInputPaused && connection.isWritable && !closing {
            connection.resumeInput()
        }
    }

    /// Stops reading and answering: cancels the calls still running (their answers could not be sent), and
    /// closes the connection once what was written has left.
    private func close(afterFlush: Bool) {
        closing = true
        let pending = exchanges
        exchanges = []
        for exchange in pending {
            exchange.sink?.cancel()
            // The sink's exchange answers through this exchange: drop the pair's link, or they keep each other.
            exchange.sink = nil
        }
        cancelTimers()
        if afterFlush { connection.close(afterFlush: .seconds(2)) }
    }

    /// The answer buffer, empty, for an exchange to build its answer in; `returnScratch` gives it back. Taken, not
    /// lent: an answer written while another is being built (a call completing the next one's turn) makes its own.
    func takeScratch() -> [UInt8] {
        var buffer: [UInt8] = []
        swap(&buffer, &scratch)
        buffer.removeAll(keepingCapacity: true)
        if buffer.capacity == 0 { buffer.reserveCapacity(512) }
        return buffer
    }

    func returnScratch(_ buffer: [UInt8]) {
        // A buffer grown by a large answer is let go rather than kept for the connection's life.
        if buffer.capacity <= 8192 { scratch = buffer }
    }

    // MARK: Timers

    /// A request that has begun must be complete within the request timeout (a peer trickling its header
    /// section holds a connection, not the server); an idle keep-alive connection closes after the idle timeout.
    private func updateTimers() {
        guard !closing else {
            cancelTimers()
            return
        }
        if parser.isInsideRequest {
            if requestTimer == nil {
                let timeout = server.configuration.requestTimeout
                requestTimer = connection.eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                    requestTimer = nil
                    guard !closing else { return }
                    server.logger.debug("HTTP/1.1 request timed out", ["peer": peer])
                    add(isHead: false, isHTTP10: false, close: true)
                        .respond(.text(408, "the request was not complete within \(timeout)"))
                }
            }
        } else if let timer = requestTimer {
            connection.eventLoop.cancelTimer(timer)
            requestTimer = nil
        }
        scheduleIdle()
    }

    /// Arms the idle timer (when it is not armed) for `idleTimeout` after the last activity; when it fires early
    /// because input came since, or a request is still being answered, it re-arms itself.
    private func scheduleIdle() {
        guard idleTimer == nil else { return }
        let timeout = server.rpcConfiguration.idleTimeout
        guard timeout > .zero else { return }
        let timeoutNanos = timeout.inNanoseconds
        let remaining = max(Int64(1_000_000), lastActivityNanos + timeoutNanos - MonotonicClock.nanoseconds())
        idleTimer = connection.eventLoop.scheduleTimer(afterNanoseconds: remaining) { [unowned self] in
            idleTimer = nil
            guard !closing else { return }
            // Not idle while a request is being answered (a stream may send for hours without reading).
            if !exchanges.isEmpty { lastActivityNanos = MonotonicClock.nanoseconds() }
            guard MonotonicClock.nanoseconds() - lastActivityNanos >= timeoutNanos else {
                scheduleIdle()
                return
            }
            close(afterFlush: true)
        }
    }

    private func cancelTimers() {
        for timer in [requestTimer, idleTimer, slowConsumerTimer].compactMap({ $0 }) { connection.eventLoop.cancelTimer(timer) }
        requestTimer = nil
        idleTimer = nil
        slowConsumerTimer = nil
    }

    // MARK: Connection events

    func writabilityChanged(_ isWritable: Bool) {
        if isWritable {
            if let timer = slowConsumerTimer {
                connection.eventLoop.cancelTimer(timer)
                slowConsumerTimer = nil
            }
            if !closing && exchanges.count < Self.maxPipelined { connection.resumeInput() }
            // A stream held back while the client was not reading may write again.
            exchanges.first?.sink?.becameWritable()
        } else {
            connection.pauseInput()
            // A client that stops reading a stream holds its output at the high watermark; past the slow
            // consumer timeout the connection closes, as a native one does.
            guard slowConsumerTimer == nil else { return }
            let timeout = server.rpcConfiguration.slowConsumerTimeout
            slowConsumerTimer = connection.eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                slowConsumerTimer = nil
                guard !connection.isWritable, !closing else { return }
                server.logger.notice("closing slow HTTP/1.1 consumer", ["peer": peer, "queued": "\(connection.queuedBytes)"])
                close(afterFlush: false)
                connection.close()
            }
        }
    }

    /// The client sent its last byte. A client that closes its connection is seen first as the end of its
    /// input: a stream (which has no end of its own) is cancelled with the connection, while unary answers
    /// still go out to a client that only half-closed, and then the connection closes.
    func inputEnded() {
        guard !closing else { return }
        if exchanges.isEmpty || exchanges.contains(where: { $0.sink?.call?.isStreaming == true }) {
            close(afterFlush: true)
        } else {
            closing = true
            exchanges.last?.closeAfter = true
        }
    }

    /// Graceful shutdown: answer what was asked, end streams UNAVAILABLE, then close (an idle connection
    /// closes now).
    func beginDrain() {
        draining = true
        if exchanges.isEmpty && !parser.isInsideRequest {
            close(afterFlush: true)
            return
        }
        for exchange in exchanges {
            guard let call = exchange.sink?.call, call.isStreaming else { continue }
            call.terminate(RPCError(code: .unavailable, message: "the server is shutting down"), sendEnd: true)
        }
    }

    func closed() {
        close(afterFlush: false)
    }
}
