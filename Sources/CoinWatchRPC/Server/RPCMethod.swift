public import CoinWatchProto

/// One method a server serves: its path and how to run it.
///
/// A method is one of three kinds, each paying only for what it uses:
/// - **inline**: answered on the connection's event loop before the handler returns,
///   with no call object, responder or call-table entry. For in-memory reads; it must
///   never block. Made by `unary(_:inline:)` (decoded request, response encoded on the
///   way out), `unary(_:inlineEncoded:)` (the handler holds the response encoded) and
///   `unary(_:inlineBytes:)` (the handler reads the request's bytes itself, for the
///   hottest reads).
/// - **unary**: the call is handed to other machinery that answers later, from any
///   thread, through a `UnaryResponder`: `unary(_:deferred:)`, and `unary(_:async:)`,
///   which runs the handler as a Swift task.
/// - **server stream**: `serverStream(_:onLoop:)` hands a loop-bound `ServerStream` to
///   code that manages many streams at once (the price hub); `serverStream(_:async:)`
///   runs a task writing through an `RPCWriter`, whose `write` suspends while the
///   connection is above its high watermark.
public struct RPCMethod: Sendable {
    /// `package.Service/Method`.
    public let path: String
    let kind: Kind

    enum Kind: Sendable {
        case unary(@Sendable (_ payload: UnsafeRawBufferPointer, _ responder: UnaryResponder<RawPayload>) -> Void)
        /// Answered before the handler returns: the connection writes the `End` itself,
        /// with no call object, responder or call-table entry.
        case inline(InlineHandler)
        case serverStream(@Sendable (_ payload: UnsafeRawBufferPointer, _ stream: ServerStream) -> Void)
    }

    /// A handler that answers on the event loop before returning: it calls `respond` once
    /// with the encoded response, or throws. The response bytes are copied into the `End`
    /// frame during `respond`, so they may be borrowed (from a cache, under a lock).
    public typealias InlineHandler = @Sendable (
        _ payload: UnsafeRawBufferPointer, _ context: ServerContext, _ respond: (UnsafeRawBufferPointer) -> Void
    ) throws(RPCError) -> Void

    var isStreaming: Bool {
        if case .serverStream = kind { return true }
        return false
    }
}

/// An already-encoded response message.
public struct RawPayload: WireMessage {
    public var bytes: [UInt8]

    public init() { bytes = [] }

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public init(serializedBytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError) {
        bytes = Array(serializedBytes)
    }

    public func serializedBytes() -> [UInt8] { bytes }

    public func serialize(appendingTo buffer: inout [UInt8]) { buffer.append(contentsOf: bytes) }

    public static var protoName: String { "bytes" }
}

extension RPCMethod {
    /// Decodes a request, mapping failure to the INVALID_ARGUMENT the protocol promises.
    /// Public for `inlineBytes` handlers, which read their request themselves and fall
    /// back to this for inputs their shortcut does not take.
    public static func decode<Request: WireMessage>(
        _ type: Request.Type, _ payload: UnsafeRawBufferPointer
    ) throws(RPCError) -> Request {
        do {
            return try Request(serializedBytes: payload, maxBytes: WireLimits.defaultMaxMessageBytes)
        } catch {
            throw RPCError(code: .invalidArgument, message: "payload is not a valid \(Request.protoName): \(error.message)")
        }
    }

    /// A unary method answered on the event loop, inline.
    public static func unary<Request, Response>(
        _ method: WireMethod<Request, Response>,
        inline handler: @escaping @Sendable (Request, ServerContext) throws(RPCError) -> Response
    ) -> RPCMethod {
        RPCMethod(path: method.path, kind: .inline { payload, context, respond throws(RPCError) in
            let request = try decode(Request.self, payload)
            let response = try handler(request, context)
            response.serializedBytes().withUnsafeBytes(respond)
        })
    }

    /// A unary method answered on the event loop with a response the handler
    /// already holds encoded (a cache of serialized responses, say), skipping the
    /// encoder on the hot path.
    public static func unary<Request, Response>(
        _ method: WireMethod<Request, Response>,
        inlineEncoded handler: @escaping @Sendable (Request, ServerContext) throws(RPCError) -> [UInt8]
    ) -> RPCMethod {
        RPCMethod(path: method.path, kind: .inline { payload, context, respond throws(RPCError) in
            let request = try decode(Request.self, payload)
            try handler(request, context).withUnsafeBytes(respond)
        })
    }

    /// A unary method answered on the event loop straight from the request's bytes:
    /// for the hottest reads, where decoding the request into a message and copying
    /// out the response show in profiles. The handler validates the payload itself
    /// (see `decode` for the fallback) and calls `respond` once with the encoded
    /// `Response`, or throws.
    public static func unary<Request, Response>(
        _ method: WireMethod<Request, Response>, inlineBytes handler: @escaping InlineHandler
    ) -> RPCMethod {
        RPCMethod(path: method.path, kind: .inline(handler))
    }

    /// A unary method answered later, from any thread, through the responder.
    public static func unary<Request, Response>(
        _ method: WireMethod<Request, Response>,
        deferred handler: @escaping @Sendable (Request, ServerContext, UnaryResponder<Response>) -> Void
    ) -> RPCMethod {
        RPCMethod(path: method.path, kind: .unary { payload, responder in
            do throws(RPCError) {
                let request = try decode(Request.self, payload)
                handler(request, responder.context, responder.typed(Response.self))
            } catch {
                responder.fail(error)
            }
        })
    }

    /// A unary method written with `async`/`await`, run as a task. Cancellation and
    /// deadlines cancel the task.
    public static func unary<Request, Response>(
        _ method: WireMethod<Request, Response>,
        async handler: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) -> RPCMethod {
        .unary(method, deferred: { request, context, responder in
            let task = Task {
                do {
                    responder.succeed(try await handler(request, context))
                } catch let error as RPCError {
                    responder.fail(error)
                } catch is CancellationError {
                    responder.fail(RPCError(code: .cancelled, message: "the call was cancelled"))
                } catch {
                    responder.fail(RPCError(code: .unknown, message: "\(error)"))
                }
            }
            responder.onCancel { task.cancel() }
        })
    }

    /// A server stream managed on the event loop by the caller's own machinery.
    public static func serverStream<Request, Response>(
        _ method: WireMethod<Request, Response>,
        onLoop handler: @escaping @Sendable (Request, ServerStream) throws(RPCError) -> Void
    ) -> RPCMethod {
        RPCMethod(path: method.path, kind: .serverStream { payload, stream in
            do throws(RPCError) {
                let request = try decode(Request.self, payload)
                try handler(request, stream)
            } catch {
                stream.finish(error)
            }
        })
    }

    /// A server stream written with `async`/`await`: the handler writes responses
    /// through the writer (which applies backpressure) and returns to end the call OK,
    /// or throws to end it with an error.
    public static func serverStream<Request, Response>(
        _ method: WireMethod<Request, Response>,
        async handler: @escaping @Sendable (Request, RPCWriter<Response>, ServerContext) async throws -> Void
    ) -> RPCMethod {
        .serverStream(method, onLoop: { (request: Request, stream: ServerStream) throws(RPCError) in
            let writer = RPCWriter<Response>(stream: stream)
            let context = stream.context
            let task = Task {
                do {
                    try await handler(request, writer, context)
                    writer.finish(nil)
                } catch let error as RPCError {
                    writer.finish(error)
                } catch is CancellationError {
                    writer.finish(RPCError(code: .cancelled, message: "the call was cancelled"))
                } catch {
                    writer.finish(RPCError(code: .unknown, message: "\(error)"))
                }
            }
            stream.onTerminate { _ in
                writer.terminated()
                task.cancel()
            }
        })
    }
}
