public import CoinWatchProto

/// Writes the responses of a server stream from async code, with backpressure.
///
/// `write` queues the message and returns once the connection is below its
/// high watermark, so a handler writing in a loop is paced by its reader
/// instead of filling memory. It throws once the call has ended (cancelled,
/// timed out, disconnected), which also stops a handler that forgot to check.
public final class RPCWriter<Response: WireMessage>: @unchecked Sendable {
    // @unchecked Sendable: `waiter` and `ended` are touched only on the stream's
    // event loop (every access is inside a job on `stream.eventLoop`).
    let stream: ServerStream
    private var waiter: CheckedContinuation<Void, any Error>?
    private var ended: RPCError?

    init(stream: ServerStream) {
        self.stream = stream
    }

    /// Sends `message`; suspends while the connection's queue is above its high watermark.
    public func write(_ message: Response) async throws {
        let bytes = message.serializedBytes()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            stream.eventLoop.execute { [self] in
                if let ended {
                    continuation.resume(throwing: ended)
                    return
                }
                guard stream.isActive else {
                    continuation.resume(throwing: RPCError(code: .cancelled, message: "the call has ended"))
                    return
                }
                bytes.withUnsafeBytes { stream.call.sendMessage(payload: $0, suffix: UnsafeRawBufferPointer(start: nil, count: 0)) }
                if stream.isWritable {
                    continuation.resume()
                } else {
                    waiter = continuation
                    stream.onWritable { [self] in
                        let waiting = waiter
                        waiter = nil
                        waiting?.resume()
                    }
                }
            }
        }
    }

    /// Loop: the call was ended from outside; wake a parked writer with the reason.
    func terminated() {
        stream.eventLoop.preconditionInEventLoop()
        let reason = RPCError(code: .cancelled, message: "the call has ended")
        ended = reason
        let waiting = waiter
        waiter = nil
        waiting?.resume(throwing: reason)
    }

    /// Ends the call (OK when `error` is nil); ignored if it already ended.
    func finish(_ error: RPCError?) {
        stream.finish(error)
    }
}
