import CoinWatchLogging
import CoinWatchProto
import Synchronization

/// The server side of one connection: handshake, calls, keepalive and limits.
///
/// Lives on its connection's event loop and is touched only there, so none of
/// its state needs a lock. `docs/PROTOCOL.md` is the specification of what it does.
final class ServerConnection: ConnectionDelegate {
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
    /// This connection's loop's table, which holds the loop's call counter.
    private let loopTable: LoopConnections
    private(set) var state = State.awaitingHello
    private var calls: [UInt64: ServerCall] = [:]
    private var handshakeTimer: TimerHandle?
    private var idleTimer: TimerHandle?
    private var slowConsumerTimer: TimerHandle?
    private var lastFrameNanos: Int64
    private var highestCallID: UInt64 = 0
    private var authToken = ""
    private var pingTokens: Double
    private var pingRefillNanos: Int64
    /// Per method (indexed like `shared.methodList`), filled on first use: the handler
    /// of an inline method and the context shared by its calls that carry no metadata
    /// and no deadline (see `InlineMethod`).
    private var inlineMethods: [InlineMethod?] = []

    init(connection: Connection, shared: ServerShared) {
        self.connection = connection
        self.eventLoop = connection.eventLoop
        self.shared = shared
        self.peer = connection.peerAddress() ?? "unknown"
        self.loopTable = shared.table(for: connection.eventLoop)
        self.lastFrameNanos = Sys.monotonicNanoseconds()
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
            self.fail(.deadlineExceeded, "no Hello within \(self.configuration.handshakeTimeout)")
        }
    }

    // MARK: ConnectionDelegate

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        guard state != .closed else { return }
        lastFrameNanos = eventLoop.iterationNanoseconds()
        if state != .awaitingHello, let fast = FrameReader.read(body), case .call(let id, let path, let timeout, let payload) = fast,
           let index = shared.methodIndex(path: path) {
            if timeout == 0, state == .ready, let inline = inlineMethod(index) {
                guard admit(id: id) else { return }
                runInline(id: id, handler: inline.handler, context: inline.context, payload: payload)
                return
            }
            let method = shared.methodList[index]
            startCall(id: id, method: method, path: method.path, timeoutMs: timeout, metadata: [:], payload: payload)
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
            fail(.invalidArgument, "frame has no kind set")
            return
        }
        if state == .awaitingHello {
            handshake(kind)
            return
        }
        switch kind {
        case .call(let call):
            call.payload.withUnsafeBytes { payload in
                startCall(id: call.callID, method: shared.methods[call.method], path: call.method, timeoutMs: call.timeoutMs,
                          metadata: call.metadata, payload: payload)
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
        shared.counters.rejectedConnections.add(1, ordering: .relaxed)
        if error.code == .httpRequest {
            shared.logger.debug("HTTP request on the RPC port", ["peer": peer])
            connection.enqueue(Array(Self.httpReply.utf8))
            terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "connection closed"))
            state = .closed
            return
        }
        let code: RPCError.Code = error.code == .tooLarge ? .resourceExhausted : .invalidArgument
        fail(code, error.message)
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
                    + "\(self.configuration.slowConsumerTimeout); the client is not reading"
                self.shared.logger.notice("closing slow consumer", ["peer": self.peer, "queued": "\(self.connection.queuedBytes)"])
                self.fail(.resourceExhausted, message, flush: false)
            }
        }
    }

    func inputEnded(on connection: Connection) {
        // The peer will send nothing more; its calls cannot be cancelled any more but
        // their answers may still be read. Finish unary calls, end streams.
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the client closed its side"))
        state = .closed
        connection.close(afterFlush: .seconds(5))
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        if state != .closed {
            state = .closed
        }
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        for timer in [handshakeTimer, idleTimer, slowConsumerTimer].compactMap({ $0 }) {
            _ = eventLoop.cancelTimer(timer)
        }
        handshakeTimer = nil
        idleTimer = nil
        slowConsumerTimer = nil
        shared.connectionClosed(self)
    }

    // MARK: Handshake

    private func handshake(_ kind: V1.Frame.Kind) {
        guard case .hello(let hello) = kind else {
            fail(.failedPrecondition, "the first frame must be Hello, got \(Self.name(of: kind))")
            return
        }
        guard hello.protocolVersion == RPCProtocol.version else {
            fail(.failedPrecondition,
                 "unsupported protocol version \(hello.protocolVersion); this server speaks \(RPCProtocol.version)")
            return
        }
        if let timer = handshakeTimer {
            _ = eventLoop.cancelTimer(timer)
            handshakeTimer = nil
        }
        authToken = hello.authToken
        state = shared.isShuttingDown ? .draining : .ready
        send(.welcome(shared.welcome))
        shared.logger.debug("client connected", ["peer": peer, "client": hello.clientName])
        scheduleIdleCheck()
        if state == .draining {
            sendGoAway(code: .unavailable, reason: "the server is shutting down")
            closeWhenDrained()
        }
    }

    // MARK: Calls

    /// Checks a new call id against the protocol's rules and the connection's limits;
    /// false after answering the call with the error `End`.
    private func admit(id: UInt64) -> Bool {
        guard id != 0 else {
            sendEnd(callID: 0, code: .invalidArgument, message: "call id 0 is reserved")
            return false
        }
        guard calls.isEmpty || calls[id] == nil else {
            sendEnd(callID: id, code: .invalidArgument, message: "call id \(id) is already in use")
            return false
        }
        guard state == .ready else {
            sendEnd(callID: id, code: .unavailable, message: "the server is shutting down; no new calls on this connection")
            return false
        }
        guard calls.count < configuration.maxConcurrentCallsPerConnection else {
            sendEnd(callID: id, code: .resourceExhausted,
                    message: "more than \(configuration.maxConcurrentCallsPerConnection) calls in flight on this connection")
            return false
        }
        return true
    }

    /// Starts a call to `method` (nil when no method has that `path`).
    private func startCall(id: UInt64, method: RPCMethod?, path: String, timeoutMs: UInt64, metadata: [String: String],
                           payload: UnsafeRawBufferPointer) {
        guard admit(id: id) else { return }
        guard let method else {
            sendEnd(callID: id, code: .unimplemented, message: "unknown method '\(path)'")
            return
        }
        var deadline: ContinuousClock.Instant?
        if timeoutMs > 0 {
            deadline = .now + .milliseconds(Int64(clamping: timeoutMs))
        }
        let context = ServerContext(
            method: method.path, metadata: metadata, deadline: deadline, peer: peer, authToken: authToken)
        let call: ServerCall
        switch method.kind {
        case .inline(let handler):
            // Done before a deadline could pass: no call object, no timer.
            runInline(id: id, handler: handler, context: context, payload: payload)
            return
        case .unary(let handler):
            call = startedCall(id: id, context: context, isStreaming: false)
            handler(payload, UnaryResponder(call: call))
        case .serverStream(let handler):
            call = startedCall(id: id, context: context, isStreaming: true)
            handler(payload, ServerStream(call: call))
        }
        // Answered before the handler returned: nothing to track.
        guard !call.isFinished else { return }
        calls[id] = call
        call.isRegistered = true
        if timeoutMs > 0 {
            let timeout = timeoutMs
            // Unowned: forgetCall cancels this timer whenever the call ends.
            call.deadlineTimer = eventLoop.scheduleTimer(after: .milliseconds(Int64(clamping: timeout))) { [unowned call] in
                call.deadlineTimer = nil
                call.terminate(RPCError(code: .deadlineExceeded, message: "deadline of \(timeout) ms exceeded"), sendEnd: true)
            }
        }
    }

    private func startedCall(id: UInt64, context: ServerContext, isStreaming: Bool) -> ServerCall {
        highestCallID = max(highestCallID, id)
        loopTable.startedCalls.add(1, ordering: .relaxed)
        shared.counters.liveCalls.add(1, ordering: .relaxed)
        return ServerCall(id: id, connection: self, context: context, isStreaming: isStreaming)
    }

    /// Runs an admitted inline call and sends its `End`. Such a call starts and ends
    /// within this function, so it is counted as started but never as live.
    private func runInline(id: UInt64, handler: RPCMethod.InlineHandler, context: ServerContext,
                           payload: UnsafeRawBufferPointer) {
        highestCallID = max(highestCallID, id)
        loopTable.startedCalls.add(1, ordering: .relaxed)
        var answered = false
        do throws(RPCError) {
            try handler(payload, context) { response in
                guard !answered else { return }
                answered = true
                sendEnd(callID: id, code: .ok, message: "", payload: response)
            }
            if !answered {
                sendEnd(callID: id, code: .internal, message: "the handler of \(context.method) returned without an answer")
            }
        } catch {
            if !answered { sendEnd(callID: id, code: error.code, message: error.message) }
        }
        if state == .draining { closeWhenDrained() }
    }

    /// The inline method at `index` of `shared.methodList` as this connection calls it;
    /// nil when that method is not inline.
    private func inlineMethod(_ index: Int) -> InlineMethod? {
        if inlineMethods.isEmpty {
            inlineMethods = Array(repeating: nil, count: shared.methodList.count)
        }
        if let method = inlineMethods[index] { return method }
        let method = shared.methodList[index]
        guard case .inline(let handler) = method.kind else { return nil }
        let context = ServerContext(method: method.path, peer: peer, authToken: authToken)
        let inline = InlineMethod(handler: handler, context: context)
        inlineMethods[index] = inline
        return inline
    }

    /// Called by a call finishing: sends its `End` and forgets it.
    func endCall(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        forgetCall(call)
        guard state != .closed else { return }
        sendEnd(callID: call.id, code: code, message: message, payload: payload)
        if state == .draining { closeWhenDrained() }
    }

    /// Removes a call from the table without sending anything.
    func forgetCall(_ call: ServerCall) {
        shared.counters.liveCalls.subtract(1, ordering: .relaxed)
        if let timer = call.deadlineTimer {
            _ = eventLoop.cancelTimer(timer)
            call.deadlineTimer = nil
        }
        if call.isRegistered {
            call.isRegistered = false
            calls.removeValue(forKey: call.id)
        }
    }

    private func terminateCalls(sendEnd: Bool, reason: RPCError) {
        guard !calls.isEmpty else { return }
        for call in Array(calls.values) {
            call.terminate(reason, sendEnd: sendEnd)
        }
    }

    // MARK: Keepalive

    private func answerPing(_ ping: V1.Ping) {
        let now = Sys.monotonicNanoseconds()
        let elapsed = Double(now - pingRefillNanos) / 1e9
        pingRefillNanos = now
        pingTokens = min(Double(configuration.pingBurst), pingTokens + elapsed * configuration.pingsPerSecond)
        guard pingTokens >= 1 else {
            shared.logger.notice("ping flood; closing", ["peer": peer])
            sendGoAway(code: .resourceExhausted, reason: "too many pings")
            terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
            state = .closed
            connection.close(afterFlush: .seconds(2))
            return
        }
        pingTokens -= 1
        send(.pong(V1.Pong(payload: Array(ping.payload.prefix(RPCProtocol.maxPingPayload)))))
    }

    private func scheduleIdleCheck() {
        guard configuration.idleTimeout > .zero else { return }
        let timeoutNanos = Self.nanoseconds(configuration.idleTimeout)
        let remaining = max(Int64(1_000_000), lastFrameNanos + timeoutNanos - Sys.monotonicNanoseconds())
        idleTimer = eventLoop.scheduleTimer(afterNanoseconds: remaining) { [unowned self] in
            self.idleTimer = nil
            guard self.state == .ready || self.state == .draining else { return }
            if Sys.monotonicNanoseconds() - self.lastFrameNanos >= timeoutNanos {
                self.shared.logger.debug("closing idle connection", ["peer": self.peer])
                self.sendGoAway(code: .unavailable, reason: "idle for \(self.configuration.idleTimeout)")
                self.terminateCalls(sendEnd: true, reason: RPCError(code: .unavailable, message: "the connection was idle"))
                self.state = .closed
                self.connection.close(afterFlush: .seconds(2))
            } else {
                self.scheduleIdleCheck()
            }
        }
    }

    // MARK: Shutdown

    /// Loop: graceful shutdown began. Refuse new calls, end streams, let unary calls finish.
    func beginDrain() {
        switch state {
        case .closed, .draining:
            return
        case .awaitingHello:
            fail(.unavailable, "the server is shutting down")
        case .ready:
            state = .draining
            sendGoAway(code: .unavailable, reason: "the server is shutting down")
            for call in Array(calls.values) where call.isStreaming {
                call.terminate(RPCError(code: .unavailable, message: "the server is shutting down"), sendEnd: true)
            }
            closeWhenDrained()
        }
    }

    /// Loop: the grace period is over.
    func forceClose() {
        guard state != .closed else {
            // Possibly still lingering for the peer's end of file: stop waiting.
            connection.close()
            return
        }
        terminateCalls(sendEnd: true, reason: RPCError(code: .unavailable, message: "the server shut down before the call finished"))
        state = .closed
        connection.close(afterFlush: .seconds(1))
    }

    private func closeWhenDrained() {
        guard state == .draining, calls.isEmpty else { return }
        state = .closed
        connection.close(afterFlush: .seconds(2))
    }

    // MARK: Output

    func send(_ kind: V1.Frame.Kind) {
        let bytes = V1.Frame(kind: kind).serializedBytes()
        bytes.withUnsafeBytes { connection.enqueueFrame(body: $0) }
    }

    func sendEnd(callID: UInt64, code: RPCError.Code, message: String,
                 payload: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        let size = FrameEnvelope.endFrameSize(callID: callID, code: code.rawValue, message: message, payloadCount: payload.count)
        connection.enqueueFrame(bodyLength: size) { buffer in
            FrameEnvelope.writeEndFrame(into: buffer, callID: callID, code: code.rawValue, message: message, payload: payload)
        }
    }

    func sendMessage(callID: UInt64, payload: UnsafeRawBufferPointer) {
        let size = FrameEnvelope.messageFrameSize(callID: callID, payloadCount: payload.count)
        connection.enqueueFrame(bodyLength: size) { buffer in
            let envelope = FrameEnvelope.writeMessageEnvelope(into: buffer, callID: callID, payloadCount: payload.count)
            if !payload.isEmpty {
                (buffer.baseAddress! + envelope).copyMemory(from: payload.baseAddress!, byteCount: payload.count)
            }
        }
    }

    /// Payloads up to this size are copied into the loop's output arena rather than
    /// queued by reference: for a price update (tens of bytes) a copy is cheaper than
    /// a reference, and a stream's consecutive messages then leave as one contiguous
    /// buffer instead of four iovecs each.
    static let copyPayloadLimit = 512

    func sendMessage(callID: UInt64, shared payload: SharedBytes, suffix: UnsafeRawBufferPointer) {
        if payload.count <= Self.copyPayloadLimit {
            let count = payload.count + suffix.count
            let size = FrameEnvelope.messageFrameSize(callID: callID, payloadCount: count)
            connection.enqueueFrame(bodyLength: size) { buffer in
                let envelope = FrameEnvelope.writeMessageEnvelope(into: buffer, callID: callID, payloadCount: count)
                payload.withUnsafeBytes { bytes in
                    if !bytes.isEmpty { (buffer.baseAddress! + envelope).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                }
                if !suffix.isEmpty {
                    (buffer.baseAddress! + envelope + payload.count).copyMemory(from: suffix.baseAddress!, byteCount: suffix.count)
                }
            }
            return
        }
        withUnsafeTemporaryAllocation(byteCount: FrameEnvelope.maxMessageEnvelopeSize, alignment: 1) { scratch in
            let count = FrameEnvelope.writeMessageEnvelope(
                into: scratch, callID: callID, payloadCount: payload.count + suffix.count)
            connection.enqueueFrame(
                prefix: UnsafeRawBufferPointer(rebasing: scratch[..<count]), payload: payload, suffix: suffix)
        }
    }

    private func sendGoAway(code: RPCError.Code, reason: String) {
        send(.goAway(V1.GoAway(lastCallID: highestCallID, code: code.wire, reason: reason)))
    }

    /// Sends a `ConnectionError` and closes: the peer broke the protocol or a limit.
    func fail(_ code: RPCError.Code, _ message: String, flush: Bool = true) {
        guard state != .closed else { return }
        shared.logger.debug("connection error", ["peer": peer, "code": "\(code)", "message": message])
        send(.error(V1.ConnectionError(code: code.wire, message: message)))
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        state = .closed
        if flush {
            connection.close(afterFlush: .seconds(2))
        } else {
            connection.close()
        }
    }

    private func closeNow() {
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        state = .closed
        connection.close()
    }

    // MARK: Helpers

    static let httpReply =
        "coinwatchd speaks the CoinWatch protocol (length-prefixed protobuf frames), not HTTP; see docs/PROTOCOL.md\n"

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

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
