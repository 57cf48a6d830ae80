import CoinWatchLogging
import CoinWatchProto

extension ServerConnection {
    /// Loop: graceful shutdown began. Refuse new calls, end streams, let unary calls finish.
    func beginDrain() {
        switch state {
        case .closed, .draining:
            return
        case .awaitingHello:
            fail(.unavailable, "the server is shutting down")
        case .ready:
            state = .draining
            sendGoAway(code: .unavailable, reason: "the server is shutting down")
            for call in Array(calls.values) where call.isStreaming {
                call.terminate(RPCError(code: .unavailable, message: "the server is shutting down"), sendEnd: true)
            }
            closeWhenDrained()
        }
    }

    /// Loop: the grace period is over.
    func forceClose() {
        guard state != .closed else {
            // Possibly still lingering for the peer's end of file: stop waiting.
            connection.close()
            return
        }
        terminateCalls(sendEnd: true, reason: RPCError(code: .unavailable, message: "the server shut down before the call finished"))
        state = .closed
        connection.close(afterFlush: .seconds(1))
    }

    func closeWhenDrained() {
        guard state == .draining, calls.isEmpty else { return }
        state = .closed
        connection.close(afterFlush: .seconds(2))
    }

    /// Sends a `ConnectionError` and closes: the peer broke the protocol or a limit.
    func fail(_ code: RPCError.Code, _ message: String, flush: Bool = true) {
        guard state != .closed else { return }
        shared.logger.debug("connection error", ["peer": peer, "code": "\(code)", "message": message])
        send(.error(V1.ConnectionError(code: code.wire, message: RPCError.bounded(message))))
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        state = .closed
        if flush {
            connection.close(afterFlush: .seconds(2))
        } else {
            connection.close()
        }
    }

    func closeNow() {
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
        state = .closed
        connection.close()
    }
}
