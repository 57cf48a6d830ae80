/// What a `TLSContext` is made from: files and choices, no OpenSSL state, so it can be kept to build the context
/// again (a certificate reload) and compared.
public struct TLSConfiguration: Hashable, Sendable {
    /// Which end of the handshake contexts made from this take.
    public enum Role: Hashable, Sendable {
        case client
        case server
    }

    /// Whether a server asks for a client certificate (mutual TLS).
    public enum ClientCertificates: Hashable, Sendable {
        /// Not asked for.
        case none
        /// Asked for; a client without one is let in, one with a certificate that does not verify is refused.
        case optional
        /// Asked for; a client without a valid one is refused.
        case required
    }

    /// The lowest protocol version accepted; the highest is always TLS 1.3.
    public enum Version: Hashable, Sendable {
        case tls12
        case tls13
    }

    public var role: Role
    /// PEM file: this side's certificate followed by its intermediates (a server's always; a client's for
    /// mutual TLS).
    public var certificateChainFile: String?
    /// PEM file: the private key of `certificateChainFile`'s first certificate (unencrypted).
    public var privateKeyFile: String?
    /// PEM file of CA certificates: for a client, trusted for the server's certificate besides (or instead of)
    /// the system's; for a server, the CAs whose client certificates it accepts.
    public var caFile: String?
    /// Whether a client trusts the system's CA store (Debian: /etc/ssl/certs) besides `caFile`.
    public var usesSystemTrustStore: Bool
    /// Whether a client checks the server's certificate and host name. On unless a test turns it off.
    public var verifiesPeer: Bool
    /// Whether a server asks for client certificates (checked against `caFile`).
    public var clientCertificates: ClientCertificates
    /// ALPN protocol names: a server's preference order, or what a client offers. Empty: no ALPN.
    public var applicationProtocols: [String]
    /// Server: keep sessions (a cache and tickets) so clients can resume them with an abbreviated handshake.
    /// Client: offer the last session of the same server again.
    public var sessionResumption: Bool
    /// Server: at most this many sessions in the server's cache.
    public var sessionCacheSize: Int
    public var minimumVersion: Version

    /// A server presenting `certificateChainFile` with `privateKeyFile`.
    public static func server(
        certificateChainFile: String, privateKeyFile: String, applicationProtocols: [String] = []
    ) -> TLSConfiguration {
        TLSConfiguration(
            role: .server, certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile, caFile: nil,
            usesSystemTrustStore: false, verifiesPeer: false, clientCertificates: .none,
            applicationProtocols: applicationProtocols, sessionResumption: true, sessionCacheSize: 20_000,
            minimumVersion: .tls12)
    }

    /// A client that verifies servers against the system's CAs plus `caFile`, offering `applicationProtocols`.
    public static func client(caFile: String? = nil, applicationProtocols: [String] = []) -> TLSConfiguration {
        TLSConfiguration(
            role: .client, certificateChainFile: nil, privateKeyFile: nil, caFile: caFile, usesSystemTrustStore: true,
            verifiesPeer: true, clientCertificates: .none, applicationProtocols: applicationProtocols,
            sessionResumption: true, sessionCacheSize: 0, minimumVersion: .tls12)
    }

    /// The ALPN names in wire form (RFC 7301 §3.1: each name prefixed with its one-byte length).
    ///
    /// - Throws: `TLSError` `.invalidArgument` for an empty name or one longer than 255 bytes.
    func applicationProtocolsWire() throws(TLSError) -> [UInt8] {
        var wire = [UInt8]()
        for name in applicationProtocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TLSError(code: .invalidArgument, message: "ALPN name \(name.debugDescription) must be 1 to 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire += bytes
        }
        return wire
    }
}
