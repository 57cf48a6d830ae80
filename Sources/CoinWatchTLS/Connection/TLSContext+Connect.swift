public import CoinWatchRPC

extension TLSContext {
    /// Connects to `host:port` and puts TLS on the connection: returned unstarted, like
    /// `Connection.connect`; the handshake runs on `loop` once the caller starts it with its delegate, which
    /// hears `transformEstablished(applicationProtocol:on:)` when it is done (output queued before then waits,
    /// bounded by the connection's watermarks). A failed handshake closes the connection with the reason.
    ///
    /// - Parameters:
    ///   - serverName: the name the server's certificate must carry (and SNI); defaults to `host`.
    ///   - handshakeTimeout: how long the TLS handshake may take once started.
    public func connect(
        host: String, port: Int, on loop: EventLoop, serverName: String? = nil, timeout: Duration = .seconds(10),
        handshakeTimeout: Duration = .seconds(10), limits: TLSSession.Limits = TLSSession.Limits()
    ) async throws(IOError) -> Connection {
        let transforms = TLSClientTransforms(context: self, serverName: serverName, limits: limits)
        let connection = try await Connection.connect(host: host, port: port, on: loop, timeout: timeout)
        // The session is made on the loop that will own it (it is not Sendable).
        let installed: Result<Void, IOError> = await withCheckedContinuation { continuation in
            let submitted = loop.execute {
                do throws(IOError) {
                    let transform = try transforms.makeClientTransform(host: host, port: port)
                    connection.startTransform(transform, handshakeTimeout: handshakeTimeout)
                    continuation.resume(returning: .success(()))
                } catch {
                    connection.close()
                    continuation.resume(returning: .failure(error))
                }
            }
            if !submitted {
                continuation.resume(returning: .failure(IOError(errno: 0, function: "TLS connect", detail: "event loop stopped")))
            }
        }
        try installed.get()
        return connection
    }
}
