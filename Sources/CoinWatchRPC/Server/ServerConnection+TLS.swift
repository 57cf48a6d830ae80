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
    /// through: the HTTP protocols go where a plaintext HTTP request goes; `coinwatch`, or no ALPN, stays in
    /// frame mode, where the first decoded bytes decide (an HTTP request is still recognised there).
    func transformEstablished(applicationProtocol: String?, on connection: Connection) {
        switch applicationProtocol {
        case "h2", "http/1.1":
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
        connection.enqueue(Array(Self.httpReply.utf8))
        terminateCalls(sendEnd: false, reason: RPCError(code: .cancelled, message: "connection closed"))
        state = .closed
        connection.close(afterFlush: Connection.defaultCloseTimeout)
    }

    /// A plaintext connection on a TLS-only listener.
    var refusesPlaintext: Bool {
        connection.transform == nil && configuration.tls?.requiresTransform == true
    }
}
