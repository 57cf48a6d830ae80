public import CoinWatchProto

/// A server stream, driven from its connection's event loop, on whichever transport brought the call.
///
/// For code that manages many streams at once and lives on the loops itself,
/// such as the price hub: nothing here allocates a task or hops threads. Every
/// member except `context`, `eventLoop` and `finish` must be used on `eventLoop`.
public struct ServerStream: Sendable {
    let call: ServerCall

    public var context: ServerContext { call.context }

    /// The loop that owns this stream's connection.
    public var eventLoop: EventLoop { call.eventLoop }

    /// The call id (the native call id, or the HTTP/2 stream id), unique per connection while the call lives
    /// (useful as a key together with the connection).
    public var callID: UInt64 { call.id }

    /// Whether the call still runs.
    public var isActive: Bool { !call.isFinished }

    /// Whether the connection is below its high watermark. Producers that can
    /// conflate should hold back while this is false and resume in `onWritable`.
    public var isWritable: Bool { call.isWritable }

    /// Bytes queued on the connection and not yet taken by the socket.
    public var queuedBytes: Int { call.queuedBytes }

    /// Sends one response message.
    public func send<Message: WireMessage>(_ message: Message) {
        let bytes = message.serializedBytes()
        bytes.withUnsafeBytes { call.sendMessage(payload: $0, suffix: UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    /// Sends one message made of `payload` followed by a per-stream `suffix`, both copied into the
    /// connection's output right behind the frame envelope.
    ///
    /// For small messages fanned out to many streams (a price update is tens of bytes): a copy into the
    /// loop's output arena costs less than queueing a reference, needs no shared buffer per message, and
    /// a stream's consecutive messages leave as one contiguous range of one `sendmsg`.
    public func send(payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        withMessageBatch { $0.send(payload: payload, suffix: suffix) }
    }

    /// Runs `handler` once, the next time the connection drops to its low watermark.
    public func onWritable(_ handler: @escaping () -> Void) {
        call.addWritableHandler(handler)
    }

    /// Runs `handler` if the call is ended from outside: cancel, deadline,
    /// disconnect or server shutdown (with the reason).
    public func onTerminate(_ handler: @escaping (RPCError) -> Void) {
        call.addTerminationHandler(handler)
    }

    /// Ends the stream: OK when `error` is nil. Any thread.
    public func finish(_ error: RPCError? = nil) {
        let call = self.call
        call.onLoop { call.finish(error) }
    }
}
