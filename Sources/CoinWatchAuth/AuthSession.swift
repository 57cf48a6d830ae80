import CoinWatchRPC

/// One connection's view of authorisation: its peer, the credential it sent when it connected, and the result of
/// checking each credential it uses, kept until `CredentialStore.generation` changes.
///
/// Confined to the connection's event loop, like the connection: no locks. A call whose credential is the one
/// checked last costs one atomic load (the generation) and a comparison of the token's bytes.
public final class AuthSession {
    let authorizer: Authorizer
    public let peer: PeerAddress
    /// The credential sent when connecting (`Hello.auth_token`), used by calls that carry none of their own.
    private var connectionToken: [UInt8] = []
    private var connectionSource = AuthorizationValue.Source.native
    /// The subject of the peer's verified TLS client certificate, when mutual TLS is on.
    public var certificateSubject: String?
    private var cached: Cached?
    private var anonymousBucket: SharedTokenBucket?
    private var anonymousBucketGeneration: UInt64 = 0

    struct Cached {
        let token: [UInt8]
        let principal: Principal
        let generation: UInt64
        let bucket: SharedTokenBucket?
    }

    init(authorizer: Authorizer, peer: PeerAddress) {
        self.authorizer = authorizer
        self.peer = peer
    }

    /// Sets the credential the connection presented when it was set up: `Hello.auth_token` on the native protocol.
    public func setConnectionCredential(_ value: String, source: AuthorizationValue.Source = .native) {
        connectionToken = Array(value.utf8)
        connectionSource = source
    }

    /// The principal for a call carrying `value` (the `authorization` metadata or header; nil or empty for none,
    /// which falls back to the connection's credential), with the bucket its calls are counted in.
    func resolve(_ value: String?, source: AuthorizationValue.Source, nowNanos: Int64) throws(RPCError)
        -> (Grant, SharedTokenBucket?)
    {
        var raw: [UInt8]
        var rawSource = source
        if let value, !value.isEmpty {
            raw = Array(value.utf8)
        } else {
            raw = connectionToken
            rawSource = connectionSource
        }
        let generation = authorizer.credentials.generation
        if let cached, cached.generation == generation, cached.token == raw {
            return (Grant(principal: cached.principal, token: raw, generation: generation), cached.bucket)
        }
        let token: ArraySlice<UInt8>?
        do {
            token = try AuthorizationValue.token(in: raw, source: rawSource)
        } catch {
            throw authorizer.failed(error, credential: nil, peer: peer, nowNanos: nowNanos)
        }
        guard let token else {
            if anonymousBucket == nil || anonymousBucketGeneration != generation {
                anonymousBucket = authorizer.bucket(for: .anonymous, peer: peer, nowNanos: nowNanos)
                anonymousBucketGeneration = generation
            }
            return (Grant(principal: .anonymous, token: [], generation: generation), anonymousBucket)
        }
        let principal = try authorizer.authenticate(token, peer: peer, nowNanos: nowNanos)
        let bucket = authorizer.bucket(for: principal, peer: peer, nowNanos: nowNanos)
        cached = Cached(token: raw, principal: principal, generation: generation, bucket: bucket)
        return (Grant(principal: principal, token: raw, generation: generation), bucket)
    }
}

/// What a call was allowed as: the principal, and what is needed to tell later whether it still may (a stream
/// outlives the check made when it started).
public struct Grant: Sendable, Hashable {
    public let principal: Principal
    /// The raw authorization value checked (bytes of a secret: never logged).
    let token: [UInt8]
    let generation: UInt64

    /// A grant for calls that were not checked (authorisation off).
    public static let unchecked = Grant(principal: .anonymous, token: [], generation: 0)
}
