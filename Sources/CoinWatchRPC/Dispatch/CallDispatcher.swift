package import CoinWatchLogging
import CoinWatchMetrics
import Synchronization

/// The one place a call is dispatched, whatever transport brought it.
///
/// Every transport (native frames, gRPC over HTTP/2, …) parses its own protocol, then hands the call here:
/// method lookup by path bytes (`methods`), admission against the limits, the call's context (method,
/// metadata, peer, deadline, transport, credentials), the authorization hook, the handler, the deadline
/// timer that ends the call DEADLINE_EXCEEDED, cancellation, and the `grpc_server_*` metrics of its
/// transport and loop. The transport only reads requests and writes what the call's `CallSink` is given.
/// So a method is written once, and every transport enforces the same limits, deadlines and rules.
///
/// Shared by all loops; everything mutable is atomic or behind a lock taken only when a transport registers.
package final class CallDispatcher: Sendable {
    final class Authorization: Sendable {
        let authorizer: any CallAuthorizer

        init(_ authorizer: any CallAuthorizer) {
            self.authorizer = authorizer
        }
    }

    package let methods: MethodTable
    /// Live calls per connection beyond this are refused RESOURCE_EXHAUSTED.
    package let maxConcurrentCallsPerConnection: Int
    /// The largest request or response message a transport accepts (the native frame limit).
    package let maxMessageBytes: Int
    /// The authorizer in a class box: testing a class reference for nil costs a compare, where testing an
    /// optional existential copies it through its value witnesses on every call.
    let authorization: Authorization?
    package let logger: Logger
    let loops: [EventLoop]
    let histogram = HistogramLayout.grpcHandling
    private let registered = Mutex<[CallTransport]>([])
    private let connectionCounts = Mutex<[ConnectionCount]>([])
    private let shuttingDown = Atomic<Bool>(false)
    /// Calls started and not yet ended (not counting inline calls, which end before they could be seen).
    let liveCalls = Atomic<Int>(0)

    package init(
        methods: [RPCMethod], maxConcurrentCallsPerConnection: Int, maxMessageBytes: Int,
        authorizer: (any CallAuthorizer)?, logger: Logger, loops: [EventLoop]
    ) {
        self.methods = MethodTable(methods)
        self.maxConcurrentCallsPerConnection = maxConcurrentCallsPerConnection
        self.maxMessageBytes = maxMessageBytes
        self.authorization = authorizer.map(Authorization.init)
        self.logger = logger
        self.loops = loops
    }

    // MARK: Transports

    /// The transport called `name`, registered on first use. Register every transport when the server is put
    /// together, so its counters exist (at 0) from the first scrape.
    package func transport(_ name: String) -> CallTransport {
        registered.withLock { transports in
            if let existing = transports.first(where: { $0.name == name }) { return existing }
            let transport = CallTransport(name: name, loops: loops, methodCount: methods.count, layout: histogram)
            transports.append(transport)
            return transport
        }
    }

    /// Every registered transport, in registration order.
    package var transports: [CallTransport] { registered.withLock { $0 } }

    /// The connection counts of the wire protocol called `name`, registered on first use (at start-up, so
    /// the series exist from the first scrape).
    package func connections(_ name: String) -> ConnectionCount {
        connectionCounts.withLock { counts in
            if let existing = counts.first(where: { $0.name == name }) { return existing }
            let count = ConnectionCount(name: name)
            counts.append(count)
            return count
        }
    }

    package var connectionProtocols: [ConnectionCount] { connectionCounts.withLock { $0 } }

    // MARK: Admission

    package var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    /// Marks the server as shutting down; true for the first caller only.
    package func markShuttingDown() -> Bool {
        !shuttingDown.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Whether a new call on a connection with `liveCalls` calls in flight may start; when not,
    /// `refusal(liveCallsOnConnection:)` says why. Transports check their own protocol's rules (call ids,
    /// stream states) first.
    @inline(__always)
    package func admits(liveCallsOnConnection liveCalls: Int) -> Bool {
        liveCalls < maxConcurrentCallsPerConnection && !isShuttingDown
    }

    /// The error a call refused by `admits` gets.
    package func refusal(liveCallsOnConnection liveCalls: Int) -> RPCError {
        if isShuttingDown {
            return RPCError(code: .unavailable, message: "the server is shutting down; no new calls on this connection")
        }
        return RPCError(code: .resourceExhausted,
                        message: "more than \(maxConcurrentCallsPerConnection) calls in flight on this connection")
    }

    // MARK: Context

    /// The context of a new call to method `index`: its deadline is `timeoutNanos` from now (none when 0).
    ///
    /// Never inlined: `ContinuousClock.Instant` has a size known only at run time (the standard library is
    /// resilient), so a caller that inlines this reserves stack for it through the type's metadata in its
    /// prologue, on every call, even on a path that never makes a context (the native inline fast path).
    @inline(never)
    package func context(
        _ index: Int, metadata: [String: String], timeoutNanos: Int64, peer: String, authToken: String, transport: String,
        peerIdentity: String = "", eventLoop: EventLoop
    ) -> ServerContext {
        var deadline: ContinuousClock.Instant?
        if timeoutNanos > 0 {
            deadline = .now + .nanoseconds(timeoutNanos)
        }
        return ServerContext(method: methods[index].path, metadata: metadata, deadline: deadline, peer: peer,
                             authToken: authToken, transport: transport, peerIdentity: peerIdentity, eventLoop: eventLoop)
    }

    // MARK: Calls

    /// Runs an inline call (a method answered on the loop before its handler returns) and writes its one
    /// answer through `sink.answer`: the transport's fast path, with no call object. Counted as started and
    /// handled on `metrics`; its handling time is recorded as 0, since reading the clock twice would cost more
    /// than the call (such calls are in-memory reads, far inside the smallest bucket).
    @inline(__always)
    package func runInline<Sink: CallSink>(
        _ index: Int, id: UInt64, handler: RPCMethod.InlineHandler, context: ServerContext,
        payload: UnsafeRawBufferPointer, metrics: LoopCallMetrics, sink: Sink
    ) {
        metrics.started(index)
        var answered = false
        var code = RPCError.Code.ok
        do throws(RPCError) {
            if let authorization {
                try authorization.authorizer.authorize(
                    CallAuthorizationRequest(method: context.method, context: context, payload: payload))
            }
            try handler(payload, context) { response in
                guard !answered else { return }
                answered = true
                sink.answer(callID: id, code: .ok, message: "", payload: response)
            }
            if !answered {
                code = .internal
                sink.answer(callID: id, code: code, message: "the handler of \(context.method) returned without an answer",
                            payload: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        } catch {
            if !answered {
                code = error.code
                sink.answer(callID: id, code: code, message: error.message, payload: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        metrics.handledInline(index, code: code)
    }

    /// Starts a call to method `index` whose request is `payload`: authorizes it, runs its handler and arms
    /// its deadline. Returns the call when it is still running (the transport tracks it until its sink is told
    /// it ended); nil when it was answered before this returned: an inline method (answered through
    /// `sink.answer`, with no call object), a refusal (also through `sink.answer`), or a handler that answered
    /// at once (through `sink.end`).
    ///
    /// - Parameters:
    ///   - frameOutput: for the native transport, the connection whose output takes `Message` frames straight
    ///     from a stream's message batch (the fan-out's fast path); nil for every other transport.
    package func start<Sink: CallSink>(
        _ index: Int, id: UInt64, context: ServerContext, timeoutNanos: Int64, payload: UnsafeRawBufferPointer,
        sink: Sink, frameOutput: Connection? = nil, eventLoop: EventLoop, metrics: LoopCallMetrics
    ) -> ServerCall? {
        let method = methods[index]
        let call: ServerCall
        switch method.kind {
        case .inline(let handler):
            // Done before a deadline could pass: no call object, no timer.
            runInline(index, id: id, handler: handler, context: context, payload: payload, metrics: metrics, sink: sink)
            return nil
        case .unary(let handler):
            guard let started = started(index, id: id, context: context, payload: payload, isStreaming: false, sink: sink,
                                        frameOutput: frameOutput, eventLoop: eventLoop, metrics: metrics)
            else { return nil }
            call = started
            handler(payload, UnaryResponder(call: call))
        case .serverStream(let handler), .bidiStream(let handler):
            guard let started = started(index, id: id, context: context, payload: payload, isStreaming: true, sink: sink,
                                        frameOutput: frameOutput, eventLoop: eventLoop, metrics: metrics)
            else { return nil }
            call = started
            handler(payload, ServerStream(call: call))
        }
        // Answered before the handler returned: nothing to track.
        guard !call.isFinished else { return nil }
        if timeoutNanos > 0 {
            let timeout = Self.describe(nanoseconds: timeoutNanos)
            // Unowned: the call cancels this timer whenever it ends.
            call.deadlineTimer = eventLoop.scheduleTimer(afterNanoseconds: timeoutNanos) { [unowned call] in
                call.deadlineTimer = nil
                call.terminate(RPCError(code: .deadlineExceeded, message: "deadline of \(timeout) exceeded"), sendEnd: true)
            }
        }
        return call
    }

    /// Another request message of a running call whose method takes many (`RPCMethod.bidiStream`).
    package func receive(_ call: ServerCall, payload: UnsafeRawBufferPointer) {
        guard !call.isFinished, case .bidiStream(let handler) = methods[call.method].kind else { return }
        call.metrics.received(call.method)
        handler(payload, ServerStream(call: call))
    }

    /// The client has sent its last request message: a call whose method takes many ends OK (unless it ended
    /// already); other calls go on (their one request started them).
    package func requestsEnded(_ call: ServerCall) {
        guard !call.isFinished, methods[call.method].takesManyRequests else { return }
        call.finish(nil)
    }

    /// Authorizes and makes the call object; nil after answering a refusal.
    private func started<Sink: CallSink>(
        _ index: Int, id: UInt64, context: ServerContext, payload: UnsafeRawBufferPointer, isStreaming: Bool,
        sink: Sink, frameOutput: Connection?, eventLoop: EventLoop, metrics: LoopCallMetrics
    ) -> ServerCall? {
        metrics.started(index)
        if let authorization {
            do throws(RPCError) {
                try authorization.authorizer.authorize(
                    CallAuthorizationRequest(method: context.method, context: context, payload: payload))
            } catch {
                metrics.handled(index, code: error.code, nanos: 0)
                sink.answer(callID: id, code: error.code, message: error.message,
                            payload: UnsafeRawBufferPointer(start: nil, count: 0))
                return nil
            }
        }
        liveCalls.add(1, ordering: .relaxed)
        return ServerCall(id: id, method: index, context: context, isStreaming: isStreaming, sink: sink,
                          frameOutput: frameOutput, eventLoop: eventLoop, metrics: metrics, dispatcher: self)
    }

    /// `250 ms`, or a `Duration`'s own text for a timeout that is not a whole number of milliseconds.
    static func describe(nanoseconds: Int64) -> String {
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000) ms" }
        return "\(Duration.nanoseconds(nanoseconds))"
    }
}
