/// A configured TLS endpoint: certificates, trust, protocol versions, ALPN and session resumption, from which
/// each connection's `TLSSession` is made.
///
/// Sendable because OpenSSL lets one `SSL_CTX` make sessions on several threads at once once it is configured
/// (openssl-threads(7); its session cache has its own lock), and nothing changes it after `init`. A new
/// certificate means a new context (see `ReloadableTLSContext`); sessions keep the context they were made from.
public final class TLSContext: @unchecked Sendable {
    /// What the context was made from.
    public let configuration: TLSConfiguration
    let handles: OpenSSLTLS.ContextHandles
    /// A client's resumable sessions, by server; nil for a server or with resumption off.
    let clientSessions: ClientSessionCache?

    /// Builds the context, reading every file now, so a bad certificate, key or CA file is reported here and
    /// not at the first handshake.
    ///
    /// - Throws: `TLSError`: `.fileUnreadable` for a file that cannot be opened, `.invalidCertificate` or
    ///   `.invalidKey` for content that is wrong (including a key that does not match the certificate),
    ///   `.invalidArgument` for a configuration that cannot work (a server without a certificate, an ALPN
    ///   name of 0 or more than 255 bytes, client certificates asked for without a CA file).
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        self.configuration = configuration
        handles = try OpenSSLTLS.makeContext(configuration)
        clientSessions = configuration.role == .client && configuration.sessionResumption ? ClientSessionCache() : nil
    }

    deinit {
        OpenSSLTLS.freeContext(handles)
    }

    /// A new session for one connection.
    ///
    /// - Parameters:
    ///   - serverName: a client's name for the server: checked against its certificate (a DNS name or an IP
    ///     address) and sent as SNI (a DNS name only). Required when the client verifies its peer.
    ///   - resumptionKey: a client's key for keeping and offering sessions (the server's `host:port`); defaults
    ///     to `serverName`. Sessions are only offered to the same key.
    ///   - limits: bounds on what the session buffers.
    public func makeSession(
        serverName: String? = nil, resumptionKey: String? = nil, limits: TLSSession.Limits = TLSSession.Limits()
    ) throws(TLSError) -> TLSSession {
        if configuration.role == .client, configuration.verifiesPeer, serverName?.isEmpty ?? true {
            throw TLSError(
                code: .invalidArgument,
                message: "a client that verifies the server needs the server's name to check its certificate against")
        }
        return try TLSSession(
            context: self, serverName: configuration.role == .client ? serverName : nil,
            resumptionKey: configuration.role == .client ? resumptionKey ?? serverName : nil, limits: limits)
    }

    /// How many handshakes a server context resumed (from its cache or a ticket) rather than did in full.
    public var resumedHandshakes: Int {
        OpenSSLTLS.resumedSessions(handles.context)
    }
}
