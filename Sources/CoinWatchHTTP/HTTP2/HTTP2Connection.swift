import CoinWatchCore
import CoinWatchLogging
import CoinWatchRPC

/// HTTP/2 on one connection, through nghttp2: requests routed to gRPC calls (served by the shared dispatcher,
/// with this connection as their `CallSink`) or to the operators' endpoints.
///
/// nghttp2 does no I/O: `received` feeds it the bytes the loop read, `flush` drains what it wants to send into
/// the connection's output. Its callbacks only record (`HTTP2Connection+Session`); the work that needs the
/// session again — starting calls, submitting responses, resuming streams — happens after `receive` returns.
/// Loop-confined, owned by its `HTTPConnectionHandler`.
final class HTTP2Connection: EventLoopFlushHook {
    enum Event {
        case headers(Int32)
        case message(Int32, [UInt8])
        case requestEnded(Int32)
        case readerFailed(Int32, GRPCMessageReader.Failure)
        case closed(Int32, UInt32)
    }

    let connection: Connection
    let server: HTTPServer
    let peer: String
    let eventLoop: EventLoop
    var session: NGHTTP2Session!
    let metrics: LoopCallMetrics
    var streams = HTTP2StreamTable()
    /// The fields requests on this connection read, and their last values.
    var requestFields = HTTP2RequestFields()
    var events: [Event] = []
    /// An empty buffer for `processEvents` to swap with `events`.
    private var spareEvents: [Event] = []
    /// Calls running on this connection (admission counts them against the per-connection limit).
    var liveCalls = 0
    /// Refused streams whose answer is sent while their request goes on: RST_STREAM(NO_ERROR) is due.
    var resetsDue: [Int32] = []
    /// Streams whose body ended during a send: their trailers are due.
    var trailersDue: [Int32] = []
    /// Streams whose pending output fell under the bound during a send: their calls may write again.
    var writableAgain: [Int32] = []
    var isReceiving = false
    var isFlushing = false
    var flushScheduled = false
    var draining = false
    var isClosed = false
    /// A control-frame flood was detected (the session fails; GOAWAY says why).
    var flooded = false
    var pingTokens: Double
    var settingsTokens: Double
    var tokensRefilledNanos: Int64
    var idleTimer: TimerHandle?
    var slowConsumerTimer: TimerHandle?
    var lastInputNanos: Int64

    init(connection: Connection, server: HTTPServer, peer: String) {
        self.connection = connection
        self.server = server
        self.peer = peer
        self.eventLoop = connection.eventLoop
        self.metrics = server.grpc.metrics(for: connection.eventLoop)
        let limits = server.configuration.http2
        pingTokens = Double(limits.controlFrameBurst)
        settingsTokens = Double(limits.controlFrameBurst)
        tokensRefilledNanos = MonotonicClock.nanoseconds()
        lastInputNanos = tokensRefilledNanos
        session = NGHTTP2Session(delegate: self, settings: limits.session)
        scheduleIdleCheck()
    }

    var configuration: HTTPServer.Configuration { server.configuration }

    // MARK: Input

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosed else { return }
        lastInputNanos = eventLoop.iterationNanoseconds()
        isReceiving = true
        let failure = session.receive(bytes)
        isReceiving = false
        if let failure {
            server.logger.notice("HTTP/2 session failed; closing", ["peer": peer, "reason": failure])
            // Tell a flooding peer why (GOAWAY ENHANCE_YOUR_CALM) before closing.
            if flooded { session.terminate(errorCode: NGHTTP2Session.enhanceYourCalm) }
        }
        processEvents()
        flush()
        if failure != nil { closeAfterFlush() }
    }

    /// Handles what the callbacks recorded, in order.
    func processEvents() {
        while !events.isEmpty {
            // The batch and `events` trade buffers with `spareEvents`, so that neither is copied: emptying an
            // array while a copy of it is alive allocates a new buffer, twice per call.
            var batch: [Event] = []
            swap(&batch, &spareEvents)
            swap(&batch, &events)
            defer {
                batch.removeAll(keepingCapacity: true)
                spareEvents = batch
            }
            for event in batch {
                switch event {
                case .headers(let id): headersComplete(id)
                case .message(let id, let bytes): messageArrived(id, bytes)
                case .requestEnded(let id): requestEnded(id)
                case .readerFailed(let id, let failure): readerFailed(id, failure)
                case .closed(let id, let code): streamClosed(id, code)
                }
            }
        }
    }

    // MARK: Output

    /// Asks for a flush at the end of this loop iteration: for output produced outside `received` (an answer
    /// from another thread, a price fan-out drain), once however many streams wrote.
    func scheduleFlush() {
        guard !isReceiving, !isFlushing, !flushScheduled, !isClosed else { return }
        flushScheduled = true
        eventLoop.flushBeforeWriting(self)
    }

    func loopWillFlush() {
        flushScheduled = false
        flush()
    }

    /// Submits due trailers and drains the session into the connection until it has nothing more or the
    /// connection is full; then tells calls that may write again.
    func flush() {
        guard !isClosed, !isFlushing else { return }
        isFlushing = true
        defer { isFlushing = false }
        var rounds = 0
        repeat {
            rounds += 1
            for id in trailersDue {
                guard let stream = streams[id], !stream.trailersSubmitted, let trailers = stream.trailers else { continue }
                stream.trailersSubmitted = true
                _ = session.trailers(streamID: id, trailers)
            }
            trailersDue.removeAll(keepingCapacity: true)
            let connection = self.connection
            if let failure = session.send({ chunk in
                connection.enqueue(chunk)
                return connection.isWritable
            }) {
                server.logger.notice("HTTP/2 session failed while sending; closing", ["peer": peer, "reason": failure])
                closeAfterFlush()
                return
            }
            for id in resetsDue { session.reset(streamID: id, errorCode: NGHTTP2Session.noError) }
            resetsDue.removeAll(keepingCapacity: true)
            processEvents()
            let ready = writableAgain
            writableAgain.removeAll(keepingCapacity: true)
            for id in ready {
                guard let stream = streams[id], let call = stream.runningCall else { continue }
                stream.reportedWritable = true
                call.becameWritable()
            }
        } while (!trailersDue.isEmpty || !writableAgain.isEmpty || !resetsDue.isEmpty) && rounds < 64
        if !session.isAlive {
            closeAfterFlush()
        }
    }

    func closeAfterFlush() {
        guard !isClosed else { return }
        connection.close(afterFlush: .seconds(2))
    }

    // MARK: Connection events

    func writabilityChanged(_ isWritable: Bool) {
        if isWritable {
            if let timer = slowConsumerTimer {
                eventLoop.cancelTimer(timer)
                slowConsumerTimer = nil
            }
            flush()
            for stream in streams.values where !stream.reportedWritable && stream.pendingCount <= configuration.http2.streamLowWatermark {
                writableAgain.append(stream.id)
            }
            flush()
        } else if slowConsumerTimer == nil {
            let timeout = server.rpcConfiguration.slowConsumerTimeout
            slowConsumerTimer = eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                slowConsumerTimer = nil
                guard !connection.isWritable, !isClosed else { return }
                server.logger.notice("closing slow HTTP/2 consumer", ["peer": peer, "queued": "\(connection.queuedBytes)"])
                endCalls(RPCError(code: .resourceExhausted, message: "the client is not reading"), sendEnd: false)
                connection.close()
            }
        }
    }

    func inputEnded() {
        endCalls(RPCError(code: .cancelled, message: "the client closed the connection"), sendEnd: false)
        flush()
        closeAfterFlush()
    }

    /// Graceful shutdown: GOAWAY (no new streams), streams end UNAVAILABLE, unary calls finish.
    func beginDrain() {
        guard !draining, !isClosed else { return }
        draining = true
        session.goAway(errorCode: NGHTTP2Session.noError, reason: "the server is shutting down")
        for stream in Array(streams.values) where stream.runningCall?.isStreaming == true {
            stream.runningCall?.terminate(RPCError(code: .unavailable, message: "the server is shutting down"), sendEnd: true)
        }
        flush()
    }

    /// The grace period is over.
    func forceClose() {
        guard !isClosed else {
            connection.close()
            return
        }
        endCalls(RPCError(code: .unavailable, message: "the server shut down before the call finished"), sendEnd: true)
        session.terminate(errorCode: NGHTTP2Session.noError)
        flush()
        connection.close(afterFlush: .seconds(1))
    }

    func closed() {
        endCalls(RPCError(code: .cancelled, message: "the connection closed"), sendEnd: false)
        for stream in streams.values { stream.connect = nil }
        isClosed = true
        for timer in [idleTimer, slowConsumerTimer].compactMap({ $0 }) { eventLoop.cancelTimer(timer) }
        idleTimer = nil
        slowConsumerTimer = nil
        streams.removeAll()
    }

    func endCalls(_ reason: RPCError, sendEnd: Bool) {
        for stream in Array(streams.values) {
            stream.runningCall?.terminate(reason, sendEnd: sendEnd)
        }
    }

    /// Closes a connection that has had no stream and no input for the idle timeout.
    func scheduleIdleCheck() {
        let timeout = server.rpcConfiguration.idleTimeout
        guard timeout > .zero else { return }
        let timeoutNanos = timeout.inNanoseconds
        let remaining = max(Int64(1_000_000), lastInputNanos + timeoutNanos - MonotonicClock.nanoseconds())
        idleTimer = eventLoop.scheduleTimer(afterNanoseconds: remaining) { [unowned self] in
            idleTimer = nil
            guard !isClosed else { return }
            if streams.isEmpty && MonotonicClock.nanoseconds() - lastInputNanos >= timeoutNanos {
                server.logger.debug("closing idle HTTP/2 connection", ["peer": peer])
                session.goAway(errorCode: NGHTTP2Session.noError, reason: "idle for \(timeout)")
                draining = true
                flush()
                closeAfterFlush()
            } else {
                scheduleIdleCheck()
            }
        }
    }
}
