public import CoinWatchRPC

/// What the HTTP layer under a Connect call provides: an answer's head and body, sent once, in order.
///
/// The HTTP layer frames the body (`Content-Length` for a complete answer, chunked or DATA frames for a stream)
/// and adds its own headers; Connect decides status, content type and bytes. Loop-confined like the call.
public protocol ConnectHTTPResponder: AnyObject {
    /// A complete answer: head and the whole body. `contentType` goes out as the `Content-Type` field, before
    /// `headers`. The body is lent for the call (a unary answer straight from the method's encoder, not copied
    /// first): a responder that keeps it copies it.
    func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer)
    /// The head of a streamed answer; the body follows in `stream(_:)` calls and ends with `finish()`.
    func startStream(status: Int, headers: [(name: String, value: String)])
    /// More of a streamed body.
    func stream(_ bytes: [UInt8])
    /// The end of a streamed body.
    func finish()
    /// Whether more may be written now without piling output up (HTTP/1.1: the connection is under its high
    /// watermark; HTTP/2: the stream's window is open too). When it turns true again after false, the HTTP
    /// layer calls `ConnectCallSink.becameWritable()`.
    var isWritable: Bool { get }
    /// Bytes written and not yet taken by the peer.
    var queuedBytes: Int { get }
}

extension ConnectHTTPResponder {
    /// A complete answer with a body already in an array.
    public func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: [UInt8]) {
        body.withUnsafeBytes { respond(status: status, contentType: contentType, headers: headers, body: $0) }
    }
}

/// The Connect side of one call: turns what the dispatcher produces (a refusal, a unary answer, stream messages,
/// the end) into the protocol's HTTP answer, whatever the HTTP version under it.
///
/// Unary: 200 with the response in the request's codec, or the mapped HTTP status with the error JSON.
/// Streaming: 200 with `application/connect+…`, one envelope per message, and the end-of-stream envelope carrying
/// the status; a refusal before any message is the same head with only the end-of-stream envelope.
///
/// A value kept inside its call's `ConnectCallSink`, not an object of its own: one allocation less per call.
public struct ConnectExchange {
    public let plan: ConnectCallPlan
    private let responder: any ConnectHTTPResponder
    private let extraHeaders: [(name: String, value: String)]
    private var streamStarted = false
    /// Whether the answer is complete; later output is dropped.
    public private(set) var isFinished = false

    /// - Parameter extraHeaders: added to every answer (CORS headers for the request's origin).
    public init(plan: ConnectCallPlan, responder: any ConnectHTTPResponder, extraHeaders: [(name: String, value: String)] = []) {
        self.plan = plan
        self.responder = responder
        self.extraHeaders = extraHeaders
    }

    /// Answers a refusal routed before the call (`ConnectRoute.fail`) in the protocol's way for its content type.
    public static func refuse(
        _ failure: ConnectFailure, contentType: ConnectContentType, responder: any ConnectHTTPResponder,
        extraHeaders: [(name: String, value: String)] = []
    ) {
        if contentType.isStreaming {
            responder.respond(status: 200, contentType: contentType.description, headers: extraHeaders,
                              body: ConnectCallPlan.streamEnd(failure.error))
        } else {
            let error = ConnectErrorResponse(failure.error)
            responder.respond(status: error.status, contentType: error.contentType, headers: extraHeaders, body: error.body)
        }
    }

    /// Answers an HTTP-level refusal (`ConnectRoute.httpError`): the status and a Connect error JSON body.
    public static func refuse(
        status: Int, failure: ConnectFailure, headers: [(name: String, value: String)], responder: any ConnectHTTPResponder
    ) {
        responder.respond(status: status, contentType: "application/json", headers: headers,
                          body: ConnectBodies.errorJSON(failure.error))
    }

    /// The whole answer of a call that ended at once: a unary response when `code` is OK, else the error.
    public mutating func answer(code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        guard !isFinished else { return }
        if plan.contentType.isStreaming {
            end(code: code, message: message)
            return
        }
        isFinished = true
        if code == .ok {
            do throws(ConnectFailure) {
                if plan.contentType.codec == .proto {
                    // The binary answer is the body as it stands.
                    responder.respond(status: 200, contentType: plan.contentType.description, headers: extraHeaders,
                                      body: payload)
                } else {
                    responder.respond(status: 200, contentType: plan.contentType.description, headers: extraHeaders,
                                      body: try plan.unaryResponseBody(payload))
                }
            } catch {
                respondError(error.error)
            }
        } else {
            respondError(RPCError(code: code, message: message))
        }
    }

    /// One message of a stream (`payload` then `suffix`, merged by protobuf on decode).
    public mutating func send(payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        guard !isFinished, plan.contentType.isStreaming else { return }
        var bytes: [UInt8] = []
        do throws(ConnectFailure) {
            try plan.appendStreamMessage(payload: payload, suffix: suffix, to: &bytes)
        } catch {
            end(code: error.error.code, message: error.error.message)
            return
        }
        startStreamIfNeeded()
        responder.stream(bytes)
    }

    /// The end of a stream, with its status; for a unary call, the same as `answer` without a response.
    public mutating func end(code: RPCError.Code, message: String) {
        guard !isFinished else { return }
        guard plan.contentType.isStreaming else {
            answer(code: code, message: message, payload: UnsafeRawBufferPointer(start: nil, count: 0))
            return
        }
        isFinished = true
        let end = ConnectCallPlan.streamEnd(code == .ok ? nil : RPCError(code: code, message: message))
        if streamStarted {
            responder.stream(end)
            responder.finish()
        } else {
            responder.respond(status: 200, contentType: plan.contentType.description, headers: extraHeaders, body: end)
        }
    }

    /// A streaming call is running: its head goes out now rather than with the first message, so the client
    /// (a browser's `fetch`, a proxy) sees the stream established even while nothing happens on it (a device
    /// with no alert yet).
    public mutating func beginStream() {
        guard !isFinished, plan.contentType.isStreaming else { return }
        startStreamIfNeeded()
    }

    private mutating func startStreamIfNeeded() {
        guard !streamStarted else { return }
        streamStarted = true
        responder.startStream(status: 200, headers: [("Content-Type", plan.contentType.description)] + extraHeaders)
    }

    private func respondError(_ error: RPCError) {
        let response = ConnectErrorResponse(error)
        responder.respond(status: response.status, contentType: response.contentType, headers: extraHeaders,
                          body: response.body)
    }
}
