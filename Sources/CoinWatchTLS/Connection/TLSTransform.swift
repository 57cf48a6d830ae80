public import CoinWatchRPC

/// TLS as a `Connection`'s transform: the connection feeds the socket's bytes to a `TLSSession` and frames what
/// it decrypts; its queued output is encrypted at flush time. The handshake runs on the connection's loop,
/// driven by the socket's readiness.
///
/// Failures reach the connection as `IOError`s (`EPROTO`, function "TLS handshake" or "TLS", OpenSSL's reason
/// in the detail); the `TLSError` itself stays in `session.error` for code that wants its code.
public final class TLSTransform: ConnectionTransform {
    public let session: TLSSession

    public init(session: TLSSession) {
        self.session = session
    }

    public func begin() throws(IOError) {
        // A client speaks first: this writes its ClientHello. A server waits for it.
        guard session.role == .client else { return }
        _ = try mapped { () throws(TLSError) in try session.advanceHandshake() }
    }

    public func receive(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
        try mapped { () throws(TLSError) in try session.feed(bytes) }
    }

    public func readDecoded(into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> ConnectionTransformRead {
        let result = try mapped { () throws(TLSError) in try session.read(into: buffer) }
        switch result {
        case .bytes(let count): return .bytes(count)
        case .needsInput: return .needsInput
        case .closed: return .ended
        }
    }

    public var isEstablished: Bool { session.isHandshakeComplete }

    public var applicationProtocol: String? { session.applicationProtocol }

    public var peerIdentity: String? { session.peerSubject }

    public func encode(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
        try mapped { () throws(TLSError) in try session.write(bytes) }
    }

    public var pendingOutputCount: Int { session.pendingOutputCount }

    public func drainOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        session.drainOutput(into: buffer)
    }

    public func inputEnded() throws(IOError) {
        try mapped { () throws(TLSError) in _ = try session.inputEnded() }
    }

    public func close() {
        session.close()
    }

    /// Runs `body`, turning a `TLSError` into the connection's `IOError`.
    private func mapped<T>(_ body: () throws(TLSError) -> T) throws(IOError) -> T {
        do {
            return try body()
        } catch {
            throw IOError.transformFailed(session.isHandshakeComplete ? "TLS" : "TLS handshake", detail: error.description)
        }
    }
}

/// A TLS listener's transforms: a session from the current context (so a certificate reload applies to new
/// connections) for each connection that starts with a TLS handshake.
public struct TLSServerTransforms: ServerTransformFactory {
    public let context: ReloadableTLSContext
    /// Whether connections that start in plaintext are refused (a TLS-only listener).
    public let requiresTransform: Bool
    public let limits: TLSSession.Limits

    public init(context: ReloadableTLSContext, requiresTransform: Bool = true, limits: TLSSession.Limits = TLSSession.Limits()) {
        self.context = context
        self.requiresTransform = requiresTransform
        self.limits = limits
    }

    public func makeServerTransform() throws(IOError) -> any ConnectionTransform {
        do {
            return TLSTransform(session: try context.makeSession(limits: limits))
        } catch {
            throw IOError.transformFailed("TLS", detail: error.description)
        }
    }
}

/// A TLS client's transforms, for `RPCClientConnection.Options.transform` and other clients of `Connection`: a
/// session from `context` checking the server's certificate against `serverName` (by default the host connected
/// to) and offering the last session of the same `host:port` for resumption.
public struct TLSClientTransforms: ClientTransformFactory {
    public let context: TLSContext
    /// The name the server's certificate must carry; nil: the host connected to.
    public let serverName: String?
    public let limits: TLSSession.Limits

    public init(context: TLSContext, serverName: String? = nil, limits: TLSSession.Limits = TLSSession.Limits()) {
        self.context = context
        self.serverName = serverName
        self.limits = limits
    }

    public func makeClientTransform(host: String, port: Int) throws(IOError) -> any ConnectionTransform {
        do {
            return TLSTransform(session: try context.makeSession(
                serverName: serverName ?? host, resumptionKey: "\(host):\(port)", limits: limits))
        } catch {
            throw IOError.transformFailed("TLS", detail: error.description)
        }
    }
}
