import CoinWatchCore
import CoinWatchMetrics
import Synchronization

/// One live call, on whichever transport brought it.
///
/// Confined to its event loop: every stored property is read and written only on `eventLoop`'s thread. The
/// public entry points that may be called elsewhere (`UnaryResponder`, `RPCWriter`, `ServerStream.finish`)
/// hop onto the loop first. Output goes to the call's `CallSink`; the call itself keeps what every transport
/// shares: the finished flag, the deadline timer, termination and writability callbacks, and its metrics.
package final class ServerCall: @unchecked Sendable {
    // @unchecked Sendable: see above; the only members touched off-loop are the
    // immutable `id`, `eventLoop`, `context` (itself Sendable).
    /// The call's id on its connection: the native call id, or the HTTP/2 stream id.
    package let id: UInt64
    package let eventLoop: EventLoop
    package let context: ServerContext
    package let isStreaming: Bool
    /// The method's index in the dispatcher's table (what metrics are kept by).
    let method: Int
    /// Where output goes, held strongly until the call finishes (every call finishes when its connection
    /// closes, which breaks the cycle); a strong reference keeps the per-message path free of weak loads.
    private(set) var sink: (any CallSink)?
    /// The native connection whose output takes this call's `Message` frames directly; nil on other transports.
    private(set) var frameOutput: Connection?
    let metrics: LoopCallMetrics
    let sentMessages: CounterCell
    let dispatcher: CallDispatcher
    let startNanos: Int64

    package private(set) var isFinished = false
    /// Whether the transport tracks the call in its table (it was not answered while starting).
    package var isRegistered = false
    var deadlineTimer: TimerHandle?
    private var terminationHandlers: [(RPCError) -> Void] = []
    private var writableHandlers: [() -> Void] = []

    init(id: UInt64, method: Int, context: ServerContext, isStreaming: Bool, sink: any CallSink, frameOutput: Connection?,
         eventLoop: EventLoop, metrics: LoopCallMetrics, dispatcher: CallDispatcher) {
        self.id = id
        self.method = method
        self.eventLoop = eventLoop
        self.sink = sink
        self.frameOutput = frameOutput
        self.context = context
        self.isStreaming = isStreaming
        self.metrics = metrics
        self.sentMessages = metrics.sentCell(method)
        self.dispatcher = dispatcher
        self.startNanos = MonotonicClock.nanoseconds()
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

    /// Sends the call's end through its sink and forgets it. Later completions are ignored.
    package func finish(status code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        eventLoop.preconditionInEventLoop()
        guard !isFinished else { return }
        ended(code)
        let sink = self.sink
        self.sink = nil
        frameOutput = nil
        terminationHandlers = []
        writableHandlers = []
        sink?.end(self, code: code, message: message, payload: payload)
    }

    package func finish(_ error: RPCError?) {
        if let error {
            finish(status: error.code, message: error.message, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        } else {
            finish(status: .ok, message: "", payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Ends the call from outside the handler (cancel, deadline, disconnect, shutdown): sets the cancellation
    /// flag, tells the handler, and sends the end unless the peer can no longer be told (`sendEnd` false).
    package func terminate(_ error: RPCError, sendEnd: Bool) {
        eventLoop.preconditionInEventLoop()
        guard !isFinished else { return }
        context.cancel()
        let handlers = terminationHandlers
        terminationHandlers = []
        if sendEnd {
            finish(error)
        } else {
            ended(error.code)
            let sink = self.sink
            self.sink = nil
            frameOutput = nil
            writableHandlers = []
            sink?.forget(self)
        }
        for handler in handlers { handler(error) }
    }

    /// The bookkeeping of every ending: the finished flag, the deadline timer, the live count, the metrics.
    private func ended(_ code: RPCError.Code) {
        isFinished = true
        if let timer = deadlineTimer {
            _ = eventLoop.cancelTimer(timer)
            deadlineTimer = nil
        }
        dispatcher.liveCalls.subtract(1, ordering: .relaxed)
        metrics.handled(method, code: code, nanos: MonotonicClock.nanoseconds() - startNanos)
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

    /// The sink may take output again: runs (and clears) the handlers waiting for that. Called by the sink.
    package func becameWritable() {
        let handlers = writableHandlers
        writableHandlers = []
        for handler in handlers { handler() }
    }

    var isWritable: Bool { sink?.isWritable(self) ?? false }

    var queuedBytes: Int { sink?.queuedBytes(self) ?? 0 }

    /// Sends one response message: `payload` followed by `suffix`.
    func sendMessage(payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        guard !isFinished, let sink else { return }
        sentMessages.increment()
        sink.send(self, payload: payload, suffix: suffix)
    }
}
