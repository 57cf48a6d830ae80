import CoinWatchLogging

/// A connection refused when it was accepted (the server's connection limit, the peer's admission, shutdown) is
/// refused in the protocol its client speaks, which only its first bytes tell: a native client's `Hello` gets the
/// `ConnectionError` frame, an HTTP/1.1 request a `503` with the reason, and the HTTP/2 preface (a gRPC or Connect
/// client) a `GOAWAY` carrying the reason, which gRPC clients read as UNAVAILABLE and retry later. Before, each was
/// sent a native frame at once, which an HTTP client could only read as a broken response.
extension ServerConnection {
    /// How long a refused connection waits for its first bytes; a client that sends nothing (or opens TLS, which
    /// would cost a handshake to refuse) gets the native frame and the connection closes, as at once before.
    static let refusalWait: Duration = .seconds(2)

    /// Loop: refuses the connection just accepted, answering when its first bytes show its protocol.
    func refuse(_ code: RPCError.Code, _ message: String) {
        refusal = RPCError(code: code, message: message)
        handshakeTimer = eventLoop.scheduleTimer(after: Self.refusalWait) { [unowned self] in
            handshakeTimer = nil
            guard let refusal, state != .closed else { return }
            fail(refusal.code, refusal.message)
        }
    }

    /// The first bytes of a refused connection were not a native frame: answered as HTTP when they open an HTTP/1.1
    /// request or the HTTP/2 preface, otherwise with the native frame.
    func answerRefusal(_ refusal: RPCError, firstBytes error: FrameError) {
        guard error.code == .httpRequest else {
            fail(refusal.code, refusal.message)
            return
        }
        shared.logger.debug("refused an HTTP connection", ["peer": peer, "message": refusal.message])
        let isHTTP2 = error.prefix.elementsEqual(HTTP2RawFrames.preface.prefix(4))
        connection.enqueue(isHTTP2 ? Self.http2Refusal(refusal) : Self.http1Refusal(refusal))
        state = .closed
        connection.close(afterFlush: Connection.defaultCloseTimeout)
    }

    /// `503 Service Unavailable` with the reason: the refusals are all "not now" (a limit, a shutdown).
    static func http1Refusal(_ refusal: RPCError) -> [UInt8] {
        let body = refusal.message + "\n"
        return Array(("HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\n"
            + "connection: close\r\ncontent-length: \(body.utf8.count)\r\n\r\n" + body).utf8)
    }

    /// The server's (empty) SETTINGS, which must open its side of an HTTP/2 connection, then GOAWAY with no stream
    /// processed (RFC 9113 §6.8): ENHANCE_YOUR_CALM (0xb) for a limit, NO_ERROR for a shutdown; the reason as its
    /// debug data.
    static func http2Refusal(_ refusal: RPCError) -> [UInt8] {
        let errorCode: UInt32 = refusal.code == .unavailable ? 0x0 : 0xb
        var goAway: [UInt8] = [0, 0, 0, 0]  // last stream id: none
        goAway += [UInt8(errorCode >> 24), UInt8(errorCode >> 16 & 0xFF), UInt8(errorCode >> 8 & 0xFF), UInt8(errorCode & 0xFF)]
        goAway += refusal.message.utf8.prefix(1024)
        return HTTP2RawFrames.settings([]) + HTTP2RawFrames.frame(HTTP2RawFrames.FrameType.goAway, flags: 0, stream: 0, goAway)
    }
}
