import CoinWatchProto

/// One live call on a server connection.
///
/// Confined to the connection's event loop: every stored property is read and
/// written only on `eventLoop`'s thread. The public entry points that may be
/// called elsewhere (`UnaryResponder`, `RPCWriter`) hop onto the loop first.
final class ServerCall: @unchecked Sendable {
    // @unchecked Sendable: see above; the only members touched off-loop are the
    // immutable `id`, `eventLoop`, `context` (itself Sendable).
    let id: UInt64
    let eventLoop: EventLoop
    let context: ServerContext
    let isStreaming: Bool
    /// The connection, held strongly until the call finishes (every call finishes
    /// when its connection closes, which breaks the cycle); a strong reference
    /// keeps the per-message path free of weak-reference loads.
    private(set) var connection: ServerConnection?

    private(set) var isFinished = false
    /// Whether the call sits in the connection's call table (it was not answered inline).
    var isRegistered = false
    var deadlineTimer: TimerHandle?
    private var terminationHandlers: [(RPCError) -> Void] = []
    private var writableHandlers: [() -> Void] = []

    init(id: UInt64, connection: ServerConnection, context: ServerContext, isStreaming: Bool) {
        self.id = id
        self.eventLoop = connection.eventLoop
        self.connection = connection
        self.context = context
        self.isStreaming = isStreaming
    }

    /// Runs `body` on the loop: now when already there, else as a job.
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop {
            body()
        } else {
            eventLoop.execute(body)
        }
    }

    // MARK: Loop-confined operations

    /// Sends the call's `End` and forgets it. Later completions are ignored.
    func finish(status code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        eventLoop.preconditionInEventLoop()
        guard !isFinished else { return }
        isFinished = true
        connection?.endCall(self, code: code, message: message, payload: payload)
        connection = nil
        terminationHandlers = []
        writableHandlers = []
    }

    func finish(_ error: RPCError?) {
        if let error {
            finish(status: error.code, message: error.message, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        } else {
            finish(status: .ok, message: "", payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Ends the call from outside the handler (cancel, deadline, disconnect,
    /// shutdown): sets the cancellation flag, tells the handler, and sends `End`
    /// unless the connection is gone.
    func terminate(_ error: RPCError, sendEnd: Bool) {
        eventLoop.preconditionInEventLoop()
        guard !isFinished else { return }
        context.cancel()
        let handlers = terminationHandlers
        terminationHandlers = []
        if sendEnd {
            finish(error)
        } else {
            isFinished = true
            connection?.forgetCall(self)
            connection = nil
            writableHandlers = []
        }
        for handler in handlers { handler(error) }
    }

    func addTerminationHandler(_ handler: @escaping (RPCError) -> Void) {
        eventLoop.preconditionInEventLoop()
        if isFinished {
            if context.isCancelled {
                handler(RPCError(code: .cancelled, message: "the call has ended"))
            }
            return
        }
        terminationHandlers.append(handler)
    }

    func addWritableHandler(_ handler: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        guard !isFinished else { return }
        writableHandlers.append(handler)
    }

    /// The connection fell back to its low watermark.
    func becameWritable() {
        let handlers = writableHandlers
        writableHandlers = []
        for handler in handlers { handler() }
    }

    var isWritable: Bool { connection?.connection.isWritable ?? false }

    var queuedBytes: Int { connection?.connection.queuedBytes ?? 0 }

    func sendMessage(_ payload: UnsafeRawBufferPointer) {
        guard !isFinished, let connection else { return }
        ServerConnection.writeMessageFrame(
            callID: id, payload: payload, suffix: UnsafeRawBufferPointer(start: nil, count: 0), to: connection.connection)
    }
}
