import CoinWatchCore
import CoinWatchLogging
import CoinWatchProto

extension ServerConnection {
    /// Answers a `Ping` with a `Pong`, within the ping budget (a token bucket of `pingBurst`
    /// refilled at `pingsPerSecond`); a flood gets `GoAway` and the connection closes.
    func answerPing(_ ping: V1.Ping) {
        guard ping.payload.count <= RPCProtocol.maxPingPayload else {
            fail(.invalidArgument,
                 "Ping payload of \(ping.payload.count) bytes exceeds the limit of \(RPCProtocol.maxPingPayload) bytes")
            return
        }
        let now = MonotonicClock.nanoseconds()
        let elapsed = Double(now - pingRefillNanos) / 1e9
        pingRefillNanos = now
        pingTokens = min(Double(configuration.pingBurst), pingTokens + elapsed * configuration.pingsPerSecond)
        guard pingTokens >= 1 else {
            shared.logger.notice("ping flood; closing", ["peer": peer])
            sendGoAway(code: .resourceExhausted, reason: "too many pings")
            terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "the connection closed"))
            state = .closed
            connection.close(afterFlush: .seconds(2))
            return
        }
        pingTokens -= 1
        send(.pong(V1.Pong(payload: ping.payload)))
    }

    /// Arms the idle timer for when `idleTimeout` will have passed since the last frame; a connection
    /// still silent then gets `GoAway` and is closed.
    func scheduleIdleCheck() {
        guard configuration.idleTimeout > .zero else { return }
        let timeoutNanos = configuration.idleTimeout.inNanoseconds
        let remaining = max(Int64(1_000_000), lastFrameNanos + timeoutNanos - MonotonicClock.nanoseconds())
        idleTimer = eventLoop.scheduleTimer(afterNanoseconds: remaining) { [unowned self] in
            self.idleTimer = nil
            guard self.state == .ready || self.state == .draining else { return }
            if MonotonicClock.nanoseconds() - self.lastFrameNanos >= timeoutNanos {
                self.shared.logger.debug("closing idle connection", ["peer": self.peer])
                // OK: nothing went wrong, the connection was unused (shutdown says UNAVAILABLE, a ping flood
                // RESOURCE_EXHAUSTED), so a client reconnects when it next needs to.
                self.sendGoAway(code: .ok, reason: "idle for \(self.configuration.idleTimeout.inMilliseconds) ms")
                self.terminateCalls(sendEnd: true, reason: RPCError(code: .unavailable, message: "the connection was idle"))
                self.state = .closed
                self.connection.close(afterFlush: .seconds(2))
            } else {
                self.scheduleIdleCheck()
            }
        }
    }
}
