import CoinWatchLogging
import Synchronization

extension ServerConnection {
    /// The first bytes were a TLS handshake and this listener has TLS: the connection's input goes through a
    /// transform from now on, and what it decodes is framed (and sniffed) as a new stream. The handshake is
    /// bounded by the same timeout as the `Hello`.
    func startTLS(_ tls: any ServerTransformFactory) {
        let transform: any ConnectionTransform
        do {
            transform = try tls.makeServerTransform()
        } catch {
            shared.logger.warning("cannot start TLS", ["peer": peer, "error": "\(error)"])
            closeNow()
            return
        }
        connection.startTransform(transform, handshakeTimeout: configuration.handshakeTimeout)
    }

    /// The TLS handshake finished. The ALPN protocol is a hint into the same dispatch the first bytes go
    /// through: the HTTP protocols go where a plaintext HTTP request goes, to the server's handoff (which tells
    /// HTTP/2 from HTTP/1.1 by the first bytes, as it does without TLS), or get the one-line refusal when there is
    /// none; `coinwatch`, or no ALPN, stays in frame mode, where the first decoded bytes decide (an HTTP request is
    /// still recognised there).
    func transformEstablished(applicationProtocol: String?, on connection: Connection) {
        // Before any call: the Hello cannot arrive before the handshake that carries it is done.
        peerIdentity = connection.transform?.peerIdentity ?? ""
        switch applicationProtocol {
        case "h2", "http/1.1":
            if handOff(connection) { return }
            shared.counters.rejectedConnections.add(1, ordering: .relaxed)
            answerHTTP()
        default:
            break
        }
    }

    /// An HTTP request (recognised by its first bytes, or announced by ALPN) on the RPC port: one plain-text
    /// answer saying what the port speaks, then close once it is sent.
    func answerHTTP() {
        shared.logger.debug("HTTP request on the RPC port", ["peer": peer])
        answer(Self.httpReply)
    }

    /// Sends `text` as the connection's last bytes and closes once it is sent.
    func answer(_ text: String) {
        connection.enqueue(Array(text.utf8))
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "connection closed"))
        state = .closed
        connection.close(afterFlush: Connection.defaultCloseTimeout)
    }

    /// A plaintext connection on a TLS-only listener.
    var refusesPlaintext: Bool {
        connection.transform == nil && tls?.requiresTransform == true
    }
}
