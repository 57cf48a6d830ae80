public import CoinWatchProto
import Synchronization

extension RPCResponseStream where Element: WireMessage {
    /// A stream whose call is started by `start`, which may first have to connect.
    ///
    /// `start` gets the raw message and end callbacks and returns how to cancel
    /// the call it started. Messages are decoded as `Element`; a message that does
    /// not decode ends the stream with INTERNAL. Cancellation before `start` has
    /// finished is remembered and applied as soon as the call exists.
    ///
    /// A call that the server never started (it sent nothing) and whose error allows it (`RPCError.maySendAgain`)
    /// is started again, up to `startingAgain` times: `start` then connects anew.
    public static func start(
        bufferLimit: Int = 4096,
        startingAgain: Int = 0,
        _ start: @escaping @Sendable (
            _ onMessage: @escaping @Sendable (UnsafeRawBufferPointer) -> Void, _ onEnd: @escaping @Sendable (RPCError?) -> Void
        ) async throws(RPCError) -> @Sendable () -> Void
    ) -> RPCResponseStream<Element> {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferLimit))
        let canceller = StreamCanceller()
        let onMessage: @Sendable (UnsafeRawBufferPointer) -> Void = { bytes in
            do throws(WireDecodingError) {
                continuation.yield(try Element(serializedBytes: bytes, maxBytes: WireLimits.defaultMaxMessageBytes))
            } catch {
                continuation.finish(throwing: RPCError(
                    code: .internal, message: "the server sent an invalid \(Element.protoName): \(error.message)"))
                canceller.cancel()
            }
        }
        /// Starts the call, which may be started `left` more times if the server does not start it.
        @Sendable func begin(left: Int) -> Task<Void, Never> {
            let onEnd: @Sendable (RPCError?) -> Void = { error in
                if let error, error.maySendAgain, left > 0, !canceller.isCancelled {
                    _ = begin(left: left - 1)
                } else if let error {
                    continuation.finish(throwing: error)
                } else {
                    continuation.finish()
                }
            }
            return Task {
                do throws(RPCError) {
                    canceller.install(try await start(onMessage, onEnd))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
        // Only the first start is cancelled as a task; a later one finds the canceller cancelled when it installs.
        let task = begin(left: startingAgain)
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                canceller.cancel()
                task.cancel()
            }
        }
        return RPCResponseStream(base: stream) { canceller.cancel() }
    }
}

/// Holds the way to cancel a call that may not have started yet.
final class StreamCanceller: Sendable {
    private enum State {
        case waiting
        case started(@Sendable () -> Void)
        case cancelled
    }

    private let state = Mutex(State.waiting)

    /// The call exists; cancels it at once if cancellation came first.
    func install(_ cancel: @escaping @Sendable () -> Void) {
        let cancelNow = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .started(cancel)
            return false
        }
        if cancelNow { cancel() }
    }

    /// Whether the stream was cancelled.
    var isCancelled: Bool {
        state.withLock { if case .cancelled = $0 { true } else { false } }
    }

    func cancel() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .cancelled }
            if case .started(let cancel) = state { return cancel }
            return nil
        }
        action?()
    }
}
