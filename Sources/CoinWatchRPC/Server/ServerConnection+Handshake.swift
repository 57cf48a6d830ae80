import CoinWatchLogging
import CoinWatchProto

extension ServerConnection {
    /// The first frame: it must be a `Hello` speaking this protocol version.
    func handshake(_ kind: V1.Frame.Kind) {
        guard case .hello(let hello) = kind else {
            fail(.failedPrecondition, "the first frame must be Hello, got \(Self.name(of: kind))")
            return
        }
        guard hello.protocolVersion == RPCProtocol.version else {
            fail(.failedPrecondition,
                 "unsupported protocol version \(hello.protocolVersion); this server speaks \(RPCProtocol.version)")
            return
        }
        if let timer = handshakeTimer {
            _ = eventLoop.cancelTimer(timer)
            handshakeTimer = nil
        }
        authToken = hello.authToken
        state = shared.isShuttingDown ? .draining : .ready
        send(.welcome(shared.welcome))
        shared.logger.debug("client connected", ["peer": peer, "client": hello.clientName])
        scheduleIdleCheck()
        if state == .draining {
            sendGoAway(code: .unavailable, reason: "the server is shutting down")
            closeWhenDrained()
        }
    }
}
