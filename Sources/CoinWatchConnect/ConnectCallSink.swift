import CoinWatchProto
package import CoinWatchRPC

/// One Connect call as the dispatcher sees it: the `CallSink` that hands what the method produces to the call's
/// `ConnectExchange`, and the way such a call is started.
///
/// The call runs through the same `CallDispatcher` as every other transport (method table, authorization hook,
/// deadline timer, cancellation, per-transport metrics under `transport="connect"`); this type only translates.
/// Loop-confined, like the call (hence `@unchecked Sendable`, as `ServerCall` is: it may be handed to the loop,
/// and is only touched there).
package final class ConnectCallSink: CallSink, @unchecked Sendable {
    package private(set) var exchange: ConnectExchange
    private let responder: any ConnectHTTPResponder
    /// The running call, while the dispatcher has one (a unary or streaming method that did not answer at once).
    package private(set) var call: ServerCall?

    init(exchange: ConnectExchange, responder: any ConnectHTTPResponder) {
        self.exchange = exchange
        self.responder = responder
    }

    /// Starts the call `plan` routed, with its binary request `request`, on `dispatcher`.
    ///
    /// - Parameters:
    ///   - metadata: the request headers the method may read (lower-case names), `authorization` included.
    ///   - peer: the client's address, for logs.
    ///   - peerIdentity: the subject of the client's TLS certificate, when it showed one.
    ///   - extraHeaders: added to the answer (the CORS headers for the request's origin).
    /// - Returns: the sink; its `call` is set while the call runs, and the HTTP layer calls `cancel()` when the
    ///   client goes away and `becameWritable()` when a full output drains.
    @discardableResult
    package static func start(
        _ plan: ConnectCallPlan, request: [UInt8], dispatcher: CallDispatcher, transport: CallTransport,
        eventLoop: EventLoop, metadata: [String: String], peer: String, peerIdentity: String = "",
        responder: any ConnectHTTPResponder,
        extraHeaders: [(name: String, value: String)] = []
    ) -> ConnectCallSink {
        let sink = ConnectCallSink(
            exchange: ConnectExchange(plan: plan, responder: responder, extraHeaders: extraHeaders), responder: responder)
        guard let index = dispatcher.methods.index(path: plan.method.path) else {
            sink.exchange.end(code: .unimplemented, message: "\(plan.method.path) is not served here")
            return sink
        }
        let context = dispatcher.context(index, metadata: metadata, timeoutNanos: plan.timeoutNanos, peer: peer,
                                         authToken: metadata["authorization"] ?? "", transport: transport.name,
                                         peerIdentity: peerIdentity, eventLoop: eventLoop)
        sink.call = request.withUnsafeBytes { payload in
            dispatcher.start(index, id: 1, context: context, timeoutNanos: plan.timeoutNanos, payload: payload, sink: sink,
                             eventLoop: eventLoop, metrics: transport.metrics(for: eventLoop))
        }
        if let call = sink.call, call.isStreaming { sink.exchange.beginStream() }
        return sink
    }

    /// The client went away (connection closed, stream reset): the call ends CANCELLED with nothing written.
    package func cancel() {
        guard let call, !call.isFinished else { return }
        call.terminate(RPCError(code: .cancelled, message: "the client went away"), sendEnd: false)
    }

    /// The output drained below its bound: a stream held back for a slow reader may write again.
    package func becameWritable() {
        call?.becameWritable()
    }

    // MARK: CallSink

    package func answer(callID: UInt64, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        exchange.answer(code: code, message: message, payload: payload)
    }

    package func send(_ call: ServerCall, payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        exchange.send(payload: payload, suffix: suffix)
    }

    package func end(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        if exchange.plan.contentType.isStreaming {
            exchange.end(code: code, message: message)
        } else {
            exchange.answer(code: code, message: message, payload: payload)
        }
        self.call = nil
    }

    package func forget(_ call: ServerCall) {
        self.call = nil
    }

    package func isWritable(_ call: ServerCall) -> Bool {
        responder.isWritable
    }

    package func queuedBytes(_ call: ServerCall) -> Int {
        responder.queuedBytes
    }
}
