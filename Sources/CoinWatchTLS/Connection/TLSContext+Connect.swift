public import CoinWatchRPC

extension TLSContext {
    /// Connects to `host:port`, puts TLS on the connection and hands it to `start` on `loop` in the same step,
    /// where the caller starts it with its delegate (and may queue output: it waits, bounded by the connection's
    /// watermarks, until the handshake is done). The ClientHello leaves in that loop iteration, so a busy task
    /// pool cannot hold it back until the server's handshake timer fires. The delegate hears
    /// `transformEstablished(applicationProtocol:on:)` when the handshake is done; a failed or stalled
    /// handshake closes the connection with the reason.
    ///
    /// - Parameters:
    ///   - serverName: the name the server's certificate must carry (and SNI); defaults to `host`.
    ///   - timeout: bounds the TCP connect.
    ///   - handshakeTimeout: bounds the TLS handshake, from `start`.
    ///   - start: runs on `loop` with the connected, not yet started connection; it must start it.
    /// - Returns: the connection `start` was given.
    /// - Throws: `IOError` when the connection cannot be made or TLS cannot be put on it (`start` is not called).
    @discardableResult
    public func connect(
        host: String, port: Int, on loop: EventLoop, serverName: String? = nil, timeout: Duration = .seconds(10),
        handshakeTimeout: Duration = .seconds(10), limits: TLSSession.Limits = TLSSession.Limits(),
        start: @escaping @Sendable (Connection) -> Void
    ) async throws(IOError) -> Connection {
        let transforms = TLSClientTransforms(context: self, serverName: serverName, limits: limits)
        let result: Result<Connection, IOError> = await withCheckedContinuation { continuation in
            // The completion runs on `loop` (on this thread only with a failure, if the loop has stopped).
            Connection.connect(host: host, port: port, on: loop, timeout: timeout) { result in
                switch result {
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                case .success(let connection):
                    // The session is made on the loop that will own it (it is not Sendable).
                    do throws(IOError) {
                        let transform = try transforms.makeClientTransform(host: host, port: port)
                        connection.startTransform(transform, handshakeTimeout: handshakeTimeout)
                    } catch {
                        connection.close()
                        continuation.resume(returning: .failure(error))
                        return
                    }
                    start(connection)
                    continuation.resume(returning: .success(connection))
                }
            }
        }
        return try result.get()
    }
}
