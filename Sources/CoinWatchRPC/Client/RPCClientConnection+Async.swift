import Synchronization
public import CoinWatchProto

extension RPCClientConnection {
    /// Runs a unary call; cancelling the task cancels the call.
    public func unary(
        method: String, payload: [UInt8], timeout: Duration? = nil, metadata: [String: String] = [:]
    ) async throws(RPCError) -> [UInt8] {
        let box = CallIDBox()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], RPCError>, Never>) in
                // A task cancelled before it got here sends nothing: a write it gave up on is never made.
                guard !box.isCancelled else {
                    continuation.resume(returning: .failure(RPCError(code: .cancelled, message: "cancelled by the caller")))
                    return
                }
                let id = startUnary(method: method, payload: payload, timeout: timeout, metadata: metadata) {
                    continuation.resume(returning: $0)
                }
                // Cancelled between that check and the call's start: its handler found no id to cancel.
                if box.set(id) { cancel(callID: id) }
            }
        } onCancel: {
            if let id = box.cancel() { cancel(callID: id) }
        }
        return try result.get()
    }

    /// Runs a unary call with typed messages.
    public func unary<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, timeout: Duration? = nil,
        metadata: [String: String] = [:]
    ) async throws(RPCError) -> Response {
        let bytes = try await unary(method: method.path, payload: request.serializedBytes(), timeout: timeout, metadata: metadata)
        do {
            return try Response(serializedBytes: bytes)
        } catch {
            throw RPCError(code: .internal, message: "the server sent an invalid \(Response.protoName): \(error.message)")
        }
    }

    /// Starts a server stream with typed messages; iterate it to read, stop
    /// iterating (or cancel the task) to cancel the call.
    ///
    /// Up to `bufferLimit` messages wait for a slow reader; past that the oldest
    /// are dropped, which shows as a gap in a stream's sequence numbers.
    public func serverStream<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, timeout: Duration? = nil,
        metadata: [String: String] = [:], bufferLimit: Int = 4096
    ) -> RPCResponseStream<Response> {
        RPCResponseStream.start(bufferLimit: bufferLimit) { onMessage, onEnd throws(RPCError) in
            let id = self.startRawStream(
                method: method.path, payload: request.serializedBytes(), timeout: timeout, metadata: metadata,
                onMessage: onMessage, onEnd: onEnd)
            return { self.cancel(callID: id) }
        }
    }
}

/// The messages of a server stream, as an async sequence of typed responses.
/// Ends normally when the call ends OK, throws `RPCError` otherwise.
///
/// Iterate it once. When the iterator goes away before the stream ended (a
/// `break` out of `for try await`, a thrown error, a cancelled task) the call is
/// cancelled on the server, so an abandoned stream never keeps producing.
public struct RPCResponseStream<Element: Sendable>: AsyncSequence, Sendable {
    let base: AsyncThrowingStream<Element, any Error>
    let cancel: @Sendable () -> Void

    public init(base: AsyncThrowingStream<Element, any Error>, cancel: @escaping @Sendable () -> Void = {}) {
        self.base = base
        self.cancel = cancel
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), token: CancelOnRelease(cancel))
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.Iterator
        let token: CancelOnRelease

        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }
}

/// Runs its action when the last reference goes away.
public final class CancelOnRelease: Sendable {
    let action: @Sendable () -> Void

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    deinit { action() }
}

/// The id of a call started inside a continuation, for the cancellation handler.
final class CallIDBox: Sendable {
    private let value = Mutex<(id: UInt64?, cancelled: Bool)>((nil, false))

    /// Records the call's id; true when the task was cancelled before it was known, so the caller cancels it now.
    func set(_ id: UInt64) -> Bool {
        value.withLock { value in
            value.id = id
            return value.cancelled
        }
    }

    /// Whether the task was cancelled.
    var isCancelled: Bool { value.withLock { $0.cancelled } }

    /// The task was cancelled: the id to cancel, or nil when the call has not started yet (`set` then says so).
    func cancel() -> UInt64? {
        value.withLock { value in
            value.cancelled = true
            return value.id
        }
    }
}
