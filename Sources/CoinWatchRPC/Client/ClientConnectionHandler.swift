import CoinWatchCore
import CoinWatchProto
import Synchronization

/// The client side of one connection's protocol.
///
/// Every member except `usable` is touched only on the connection's event loop;
/// `RPCClientConnection` hops there before calling in.
final class ClientConnectionHandler: ConnectionDelegate, @unchecked Sendable {
    // @unchecked Sendable: loop confinement as stated above; `usable` is atomic.
    enum Pending {
        case unary(@Sendable (Result<[UInt8], RPCError>) -> Void)
        case stream(onMessage: @Sendable (UnsafeRawBufferPointer) -> Void, onEnd: @Sendable (RPCError?) -> Void)

        func fail(_ error: RPCError) {
            switch self {
            case .unary(let completion): completion(.failure(error))
            case .stream(_, let onEnd): onEnd(error)
            }
        }
    }

    struct Call {
        var pending: Pending
        var deadline: TimerHandle?
    }

    /// A call not sent yet: what its Call frame needs, and its deadline (`MonotonicClock` nanoseconds, 0: none) so
    /// that the server gets what is left of it when the frame goes. Kept apart from `Call`, and without a
    /// `ContinuousClock.Instant` (a resilient type, whose size is known only at run time): a `Call` holding one made
    /// every access to `calls` go through the type's metadata, and cost calls through the library a quarter of
    /// their rate.
    struct HeldCall {
        let method: String
        let payload: [UInt8]
        let deadlineNanos: Int64
        let metadata: [(String, String)]
    }

    let connection: Connection
    let options: RPCClientConnection.Options
    let address: String
    let usable = Atomic<Bool>(false)
    private var handshake: ((Result<V1.Welcome, RPCError>) -> Void)?
    private var handshakeTimer: TimerHandle?
    private var calls: [UInt64: Call] = [:]
    private var closedReason: RPCError?
    /// Set by `GoAway`: calls above this id were not accepted.
    private var goAwayLastCallID: UInt64?
    private var keepaliveTimer: TimerHandle?
    /// `closeWhenIdle()` was asked for: the connection closes when its last call ends.
    private var closesWhenIdle = false
    /// How often to ping: `options.keepaliveInterval`, or a third of the idle timeout the server announced when
    /// that is sooner (docs/PROTOCOL.md section 5), so a stream with nothing to send outlives the idle timeout.
    private var keepaliveInterval: Duration = .zero
    /// The largest frame the server takes (`Welcome.max_frame_bytes`; 0 until it is known): a call whose frame is
    /// larger fails by itself, instead of being a connection error that fails every call sharing it.
    private var serverMaxFrameBytes = 0
    private var pongTimer: TimerHandle?
    private var pingCounter: UInt64 = 0
    /// The most calls the server runs at once on this connection (`Welcome.max_concurrent_calls`; 0: no limit
    /// announced). A call past it would end `RESOURCE_EXHAUSTED` at once, so it is held here instead, as gRPC
    /// clients hold streams past `MAX_CONCURRENT_STREAMS`, and sent when a call ends.
    private var serverMaxConcurrentCalls = 0
    /// Calls whose Call frame was sent and whose End has not come, nor their Cancel gone.
    private var sentCalls = 0
    /// Calls held back, by id; their `calls` entries hold their completions and deadlines.
    private var heldCalls: [UInt64: HeldCall] = [:]
    /// The ids of held calls, oldest first; an id whose call is gone or already sent is skipped.
    private var heldOrder: [UInt64] = []
    private var heldOrderStart = 0
    /// How many calls are held: read by tests and diagnostics off the loop.
    let heldCallCount = Atomic<Int>(0)

    init(connection: Connection, options: RPCClientConnection.Options, address: String) {
        self.connection = connection
        self.options = options
        self.address = address
    }

    var eventLoop: EventLoop { connection.eventLoop }

    /// Loop: starts the connection and sends `Hello`; `completion` gets the `Welcome`.
    func begin(_ completion: @escaping (Result<V1.Welcome, RPCError>) -> Void) {
        handshake = completion
        connection.start(delegate: self, options: ConnectionOptions(
            maxFrameBytes: options.maxFrameBytes, highWatermark: 1 << 20, lowWatermark: 256 << 10))
        // Timers capture `self` unowned: failEverything cancels them all before the
        // handler can be released (the connection holds it until it reports closed).
        handshakeTimer = eventLoop.scheduleTimer(after: options.connectTimeout) { [unowned self] in
            self.handshakeTimer = nil
            self.close(reason: RPCError(code: .deadlineExceeded, message: "no Welcome from \(self.address) in time"))
        }
        send(.hello(V1.Hello(
            protocolVersion: RPCProtocol.version, clientName: options.clientName, authToken: options.authToken)))
    }

    // MARK: Calls

    func startCall(id: UInt64, method: String, payload: [UInt8], timeout: Duration?, metadata: [String: String],
                   pending: Pending) {
        // Neither reached the server: the caller may send them again elsewhere (`RPCError.notProcessed`).
        if let closedReason {
            pending.fail(closedReason.asNotProcessed)
            return
        }
        if goAwayLastCallID != nil {
            pending.fail(RPCError(code: .unavailable, message: "the server at \(address) is going away; reconnect").asNotProcessed)
            return
        }
        var timeoutMs: UInt64 = 0
        if let timeout { timeoutMs = UInt64(max(1, timeout.inMilliseconds)) }
        let entries = metadata.isEmpty ? [] : metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let size = FrameEnvelope.callFrameSize(
            callID: id, method: method, timeoutMs: timeoutMs, metadata: entries, payloadCount: payload.count)
        if serverMaxFrameBytes > 0 && size > serverMaxFrameBytes {
            pending.fail(RPCError(
                code: .resourceExhausted,
                message: "the call's frame of \(size) bytes exceeds the server's limit of \(serverMaxFrameBytes) bytes"))
            return
        }
        var call = Call(pending: pending, deadline: nil)
        if let timeout {
            call.deadline = eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                self.expire(id: id, timeoutMs: timeoutMs)
            }
        }
        if serverMaxConcurrentCalls > 0 && sentCalls >= serverMaxConcurrentCalls {
            let deadlineNanos = timeout.map { MonotonicClock.nanoseconds() + $0.inNanoseconds } ?? 0
            heldCalls[id] = HeldCall(method: method, payload: payload, deadlineNanos: deadlineNanos, metadata: entries)
            calls[id] = call
            heldOrder.append(id)
            heldCallCount.add(1, ordering: .relaxed)
            return
        }
        calls[id] = call
        sendCall(id: id, method: method, payload: payload, timeoutMs: timeoutMs, metadata: entries, size: size)
    }

    /// Writes the Call frame; `size` is `FrameEnvelope.callFrameSize` of it.
    private func sendCall(
        id: UInt64, method: String, payload: [UInt8], timeoutMs: UInt64, metadata: [(String, String)], size: Int
    ) {
        sentCalls += 1
        payload.withUnsafeBytes { bytes in
            connection.enqueueFrame(bodyLength: size) { buffer in
                FrameEnvelope.writeCallFrame(
                    into: buffer, callID: id, method: method, timeoutMs: timeoutMs, metadata: metadata, payload: bytes)
            }
        }
    }

    /// A sent call is over (its End came, or its Cancel went): the oldest held calls take its room, in the order
    /// they were started. A held call is sent with what is left of its deadline.
    private func sentCallEnded() {
        sentCalls -= 1
        if heldCalls.isEmpty {
            if !heldOrder.isEmpty {
                heldOrder.removeAll(keepingCapacity: true)
                heldOrderStart = 0
            }
            return
        }
        while sentCalls < serverMaxConcurrentCalls, heldOrderStart < heldOrder.count, closedReason == nil {
            let id = heldOrder[heldOrderStart]
            heldOrderStart += 1
            guard let held = heldCalls.removeValue(forKey: id) else { continue }
            heldCallCount.subtract(1, ordering: .relaxed)
            var timeoutMs: UInt64 = 0
            if held.deadlineNanos != 0 {
                timeoutMs = UInt64(max(1, (held.deadlineNanos - MonotonicClock.nanoseconds()) / 1_000_000))
            }
            // The timeout written may take fewer bytes than the one the call started with.
            let size = FrameEnvelope.callFrameSize(
                callID: id, method: held.method, timeoutMs: timeoutMs, metadata: held.metadata,
                payloadCount: held.payload.count)
            sendCall(
                id: id, method: held.method, payload: held.payload, timeoutMs: timeoutMs, metadata: held.metadata,
                size: size)
        }
        if heldOrderStart == heldOrder.count {
            heldOrder.removeAll(keepingCapacity: true)
            heldOrderStart = 0
        }
    }

    /// Takes `id`'s call out of the table and stops its deadline; `wasHeld` says the server never saw it.
    private func removeCall(_ id: UInt64) -> (call: Call, wasHeld: Bool)? {
        guard let call = calls.removeValue(forKey: id) else { return nil }
        if let timer = call.deadline { _ = eventLoop.cancelTimer(timer) }
        let wasHeld = isHeld(id)
        if wasHeld {
            heldCalls[id] = nil
            heldCallCount.subtract(1, ordering: .relaxed)
        }
        return (call, wasHeld)
    }

    private func isHeld(_ id: UInt64) -> Bool {
        !heldCalls.isEmpty && heldCalls[id] != nil
    }

    func cancel(id: UInt64, reason: RPCError) {
        guard let (call, wasHeld) = removeCall(id) else { return }
        // A held call never reached the server: there is nothing to cancel there.
        if !wasHeld, closedReason == nil {
            send(.cancel(V1.Cancel(callID: id)))
            sentCallEnded()
        }
        call.pending.fail(reason)
        closeIfIdleAndDone()
    }

    private func expire(id: UInt64, timeoutMs: UInt64) {
        guard var call = calls[id] else { return }
        call.deadline = nil
        calls[id] = call
        cancel(id: id, reason: RPCError(code: .deadlineExceeded, message: "deadline of \(timeoutMs) ms exceeded"))
    }

    // MARK: ConnectionDelegate

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        switch FrameReader.read(body) {
        case .message(let id, let payload):
            if let call = calls[id], case .stream(let onMessage, _) = call.pending { onMessage(payload) }
            return
        case .end(let id, let code, let message, let payload):
            // FrameReader has checked that the message is UTF-8 without NUL; an OK status carries no text to keep.
            let error = code == 0
                ? nil : RPCError(code: RPCError.Code(rawValue: code), message: String(decoding: message, as: UTF8.self))
            finishCall(id: id, error: error, payload: payload)
            return
        case .call, nil:
            break
        }
        let frame: V1.Frame
        do {
            frame = try V1.Frame(serializedBytes: body, maxBytes: options.maxFrameBytes)
        } catch {
            protocolViolation("the server sent an invalid frame: \(error.message)")
            return
        }
        switch frame.kind {
        case .welcome(let welcome):
            guard let handshake else {
                protocolViolation("the server sent a second Welcome")
                return
            }
            self.handshake = nil
            if let timer = handshakeTimer { _ = eventLoop.cancelTimer(timer) }
            handshakeTimer = nil
            usable.store(true, ordering: .releasing)
            serverMaxFrameBytes = Int(welcome.maxFrameBytes)
            serverMaxConcurrentCalls = Int(welcome.maxConcurrentCalls)
            keepaliveInterval = Self.keepaliveInterval(configured: options.keepaliveInterval, serverIdleTimeoutMs: welcome.idleTimeoutMs)
            scheduleKeepalive()
            handshake(.success(welcome))
        case .end(let end):
            end.payload.withUnsafeBytes { finishCall(id: end.callID, error: RPCError(status: end.status), payload: $0) }
        case .message(let message):
            guard let call = calls[message.callID], case .stream(let onMessage, _) = call.pending else { return }
            message.payload.withUnsafeBytes { onMessage($0) }
        case .ping(let ping):
            send(.pong(V1.Pong(payload: ping.payload)))
        case .pong:
            if let timer = pongTimer { _ = eventLoop.cancelTimer(timer) }
            pongTimer = nil
        case .goAway(let goAway):
            goAwayLastCallID = goAway.lastCallID
            usable.store(false, ordering: .releasing)
            // The server will not start these, so they are marked for sending again (`RPCError.notProcessed`): the
            // calls it did not accept, and every held call, whatever its id (ids are taken off the loop, so a held
            // call's may be below a sent one's); none may be sent to a server going away.
            let reason = RPCError(code: .unavailable, message: "the server at \(address) is going away: \(goAway.reason)")
                .asNotProcessed
            for id in calls.keys where id > goAway.lastCallID || isHeld(id) {
                if let (call, wasHeld) = removeCall(id) {
                    if !wasHeld { sentCalls -= 1 }
                    call.pending.fail(reason)
                }
            }
            closeIfIdleAndDone()
        case .error(let error):
            close(reason: RPCError(code: RPCError.Code(error.code), message: error.message))
        case nil:
            // A kind a later version of the protocol added: ignored, as docs/PROTOCOL.md says a receiver does.
            break
        case .hello, .call, .cancel:
            protocolViolation("the server sent a frame a server may not send")
        }
    }

    private func finishCall(id: UInt64, error: RPCError?, payload: UnsafeRawBufferPointer) {
        // An End for a held call's id is the server's mistake; the held call stays held.
        guard !isHeld(id), let (call, _) = removeCall(id) else { return }
        sentCallEnded()
        switch call.pending {
        case .unary(let completion):
            completion(error.map { .failure($0) } ?? .success(Array(payload)))
        case .stream(_, let onEnd):
            onEnd(error)
        }
        closeIfIdleAndDone()
    }

    /// Loop: `RPCClientConnection.closeWhenIdle()`.
    func closeWhenIdle() {
        closesWhenIdle = true
        usable.store(false, ordering: .releasing)
        closeIfIdleAndDone()
    }

    private func closeIfIdleAndDone() {
        guard closesWhenIdle, calls.isEmpty else { return }
        close(reason: RPCError(code: .unavailable, message: "the connection was closed by the client"))
    }

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        if let text = Self.textPrefix(error.prefix) {
            close(reason: RPCError(code: .unavailable, message: Self.notCoinWatch(address, answeredWith: text)))
            return
        }
        close(reason: RPCError(code: .internal, message: "bad frame from \(address): \(error.message)"))
    }

    /// The first bytes a server sent when they are printable ASCII. No CoinWatch frame starts that way: four such
    /// bytes as a length prefix would announce a frame of at least 538 MB. It is some other protocol's text (an
    /// HTTP status line, an HTML page, an SSH or SMTP banner, a Redis error).
    static func textPrefix(_ prefix: [UInt8]) -> String? {
        guard prefix.count == 4, prefix.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: prefix, as: UTF8.self)
    }

    /// Why a server that answered with `text` is not one to talk to: said for what it is (an HTTP server) rather than
    /// as an impossible frame length.
    static func notCoinWatch(_ address: String, answeredWith text: String) -> String {
        if text == "HTTP" || text.hasPrefix("<") {
            return "\(address) is an HTTP server, not coinwatchd: it answered the CoinWatch handshake with \"\(text)…\""
        }
        return "\(address) is not coinwatchd: it answered the CoinWatch handshake with text (\"\(text)…\")"
    }

    func inputEnded(on connection: Connection) {
        close(reason: RPCError(code: .unavailable, message: "the server at \(address) closed the connection"))
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        let detail = error.map { ": \($0)" } ?? ""
        failEverything(RPCError(code: .unavailable, message: "the connection to \(address) closed\(detail)"))
    }

    // MARK: Keepalive

    /// The ping interval: the configured one (zero: none), but at most a third of a server's idle timeout, and
    /// never under a second, the rate at which the server's ping budget refills.
    static func keepaliveInterval(configured: Duration, serverIdleTimeoutMs: UInt32) -> Duration {
        guard serverIdleTimeoutMs > 0 else { return configured }
        let third: Duration = max(.seconds(1), .milliseconds(Int64(serverIdleTimeoutMs) / 3))
        return configured > .zero ? min(configured, third) : third
    }

    private func scheduleKeepalive() {
        guard keepaliveInterval > .zero, closedReason == nil else { return }
        keepaliveTimer = eventLoop.scheduleTimer(after: keepaliveInterval) { [unowned self] in
            self.keepaliveTimer = nil
            guard self.closedReason == nil else { return }
            self.pingCounter += 1
            var payload = [UInt8](repeating: 0, count: 8)
            withUnsafeBytes(of: self.pingCounter.bigEndian) { payload = Array($0) }
            self.send(.ping(V1.Ping(payload: payload)))
            if self.pongTimer == nil {
                self.pongTimer = self.eventLoop.scheduleTimer(after: self.options.keepaliveTimeout) { [unowned self] in
                    self.pongTimer = nil
                    self.close(reason: RPCError(
                        code: .unavailable,
                        message: "no Pong from \(self.address) within \(self.options.keepaliveTimeout); the connection is dead"))
                }
            }
            self.scheduleKeepalive()
        }
    }

    // MARK: Closing

    func close(reason: RPCError) {
        guard closedReason == nil else { return }
        failEverything(reason)
        connection.close()
    }

    private func protocolViolation(_ message: String) {
        close(reason: RPCError(code: .internal, message: message))
    }

    private func failEverything(_ reason: RPCError) {
        if closedReason == nil { closedReason = reason }
        usable.store(false, ordering: .releasing)
        for timer in [handshakeTimer, keepaliveTimer, pongTimer].compactMap({ $0 }) {
            _ = eventLoop.cancelTimer(timer)
        }
        handshakeTimer = nil
        keepaliveTimer = nil
        pongTimer = nil
        if let handshake {
            self.handshake = nil
            handshake(.failure(reason))
        }
        let pending = calls
        let held = heldCalls
        calls = [:]
        heldCalls = [:]
        heldOrder = []
        heldOrderStart = 0
        sentCalls = 0
        heldCallCount.store(0, ordering: .relaxed)
        for (id, call) in pending {
            if let timer = call.deadline { _ = eventLoop.cancelTimer(timer) }
            // A held call was never sent; whether the server started a sent one is unknown.
            let error = closedReason ?? reason
            call.pending.fail(held[id] == nil ? error : error.asNotProcessed)
        }
    }

    private func send(_ kind: V1.Frame.Kind) {
        let bytes = V1.Frame(kind: kind).serializedBytes()
        bytes.withUnsafeBytes { connection.enqueueFrame(body: $0) }
    }
}
