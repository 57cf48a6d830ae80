public import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

/// Decides, before any handler runs, whether a call may go ahead: the same rules for every transport.
///
/// The outcome is one of: allowed (a `Grant`); UNAUTHENTICATED when the call has no valid credential and needs
/// one; PERMISSION_DENIED when the credential is valid but does not allow the call; RESOURCE_EXHAUSTED, with a
/// retry hint, when a limit is hit; INVALID_ARGUMENT when a device call's request does not say which device.
/// `docs/SECURITY.md` is the specification.
public final class Authorizer: Sendable {
    public struct Configuration: Sendable, Hashable {
        public var mode = AuthMode.off
        /// Whether price reads are open to anonymous callers.
        public var publicPrices = false
        public var limits = AbuseLimits()

        public init() {}
    }

    public let configuration: Configuration
    public let credentials: CredentialStore
    public let policy: MethodPolicy
    /// Open and new connections per address; transports call it as they accept.
    public let connections: ConnectionLimiter
    let requests: RequestLimiter
    let failures: FailureTracker
    let logger: Logger

    public init(
        configuration: Configuration, credentials: CredentialStore, policy: MethodPolicy? = nil,
        logger: Logger = .disabled
    ) {
        self.configuration = configuration
        self.credentials = credentials
        self.policy = policy ?? .coinWatch(publicPrices: configuration.publicPrices)
        let limits = configuration.limits
        connections = ConnectionLimiter(
            maxOpenPerAddress: limits.connectionsPerAddress, rate: limits.connectionRate, capacity: limits.maxTrackedEntries)
        requests = RequestLimiter(capacity: limits.maxTrackedEntries)
        failures = FailureTracker(
            rate: limits.failedAuthenticationRate, logInterval: limits.failureLogInterval, capacity: limits.maxTrackedEntries)
        self.logger = logger
    }

    /// The state a new connection from `peer` (its `host:port` text) keeps.
    public func makeSession(peer: String) -> AuthSession {
        AuthSession(authorizer: self, peer: PeerAddress(peer))
    }

    /// Checks one call.
    ///
    /// - Parameters:
    ///   - method: `package.Service/Method`.
    ///   - authorization: the call's `authorization` metadata or header; nil or empty to use the connection's.
    ///   - payload: the serialized request, for the device a device method is about.
    ///   - nowNanos: a monotonic clock in nanoseconds (the event loop's), for the rate limits.
    public func authorize(
        method: String, authorization: String?, source: AuthorizationValue.Source, payload: UnsafeRawBufferPointer,
        session: AuthSession, nowNanos: Int64
    ) throws(RPCError) -> Grant {
        guard configuration.mode == .required else {
            return try authorizeWithAuthOff(method: method, authorization: authorization, source: source,
                                            session: session, nowNanos: nowNanos)
        }
        let (grant, bucket) = try session.resolve(authorization, source: source, nowNanos: nowNanos)
        if let bucket, let wait = bucket.take(nowNanos: nowNanos) {
            throw RPCError(
                code: .resourceExhausted,
                message: "too many calls for \(describe(grant.principal, session.peer)); "
                    + "retry after \(wait.wholeMillisecondsRoundedUp) ms")
        }
        try decide(method: method, principal: grant.principal, payload: payload)
        return grant
    }

    /// With authorisation off, only `PublishPrices` is checked, and only when a `--publish-token` is set: the
    /// behaviour of servers before keys existed.
    private func authorizeWithAuthOff(
        method: String, authorization: String?, source: AuthorizationValue.Source, session: AuthSession, nowNanos: Int64
    ) throws(RPCError) -> Grant {
        guard credentials.hasPublishToken, method == V1.CoinWatch.publishPrices.path else { return .unchecked }
        let grant: Grant
        do {
            grant = try session.resolve(authorization, source: source, nowNanos: nowNanos).0
        } catch where error.code == .unauthenticated {
            throw RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")
        }
        switch grant.principal {
        case .key(_, let scopes) where scopes.contains(.pricesPublish):
            return grant
        case .anonymous:
            throw RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")
        default:
            throw RPCError(code: .permissionDenied, message: "\(grant.principal) may not call \(method)")
        }
    }

    /// The policy's verdict for a principal that authenticated (or is anonymous).
    func decide(method: String, principal: Principal, payload: UnsafeRawBufferPointer) throws(RPCError) {
        guard let rule = policy.rule(for: method) else {
            if principal == .anonymous { throw Self.needsCredential(method) }
            throw RPCError(code: .permissionDenied, message: "\(method) has no access rule; no one may call it")
        }
        switch rule {
        case .open:
            return
        case .scope(let scope, let anonymous):
            switch principal {
            case .key(_, let scopes) where scopes.contains(scope):
                return
            case .anonymous:
                if anonymous { return }
                throw Self.needsCredential(method)
            case .key:
                throw RPCError(code: .permissionDenied, message: "\(principal) lacks the scope \(scope) that \(method) needs")
            case .device:
                throw RPCError(code: .permissionDenied, message: "a device secret may not call \(method); it needs a key with \(scope)")
            }
        case .device(let scope, let field, let claims):
            switch principal {
            case .key(_, let scopes) where scopes.contains(scope):
                return
            case .key:
                throw RPCError(code: .permissionDenied, message: "\(principal) lacks the scope \(scope) that \(method) needs")
            case .device(let device):
                guard try RequestDevice.matches(payload, field: field, device: device) else {
                    throw RPCError(code: .permissionDenied, message: "this device secret is for device '\(device)', not the one in the request")
                }
            case .anonymous:
                if claims {
                    let device = try RequestDevice.device(payload, field: field)
                    // Trust on first use: a device no one holds a secret for may be claimed; the handler issues the
                    // secret (`DeviceClaims`), and checks again, under the store's lock, that no one beat it to it.
                    if !credentials.isClaimed(device) { return }
                }
                throw Self.needsCredential(method)
            }
        }
    }

    static func needsCredential(_ method: String) -> RPCError {
        RPCError(code: .unauthenticated,
                 message: "\(method) needs a credential: send 'authorization: Bearer <key or device secret>'")
    }

    /// Whether a call allowed earlier (a stream) may still go on: false once its key is revoked or its device
    /// reset. Costs one atomic load while nothing has changed.
    public func isStillValid(_ grant: Grant) -> Bool {
        guard grant.principal != .anonymous, grant.generation != credentials.generation else { return true }
        guard let token = try? AuthorizationValue.token(in: grant.token, source: .native),
              let credential = try? Credential(token: token) else { return false }
        return (try? credentials.authenticate(credential).get()) == grant.principal
    }

    // MARK: Used by sessions

    /// Checks a token, counting and logging a failure.
    func authenticate(_ token: ArraySlice<UInt8>, peer: PeerAddress, nowNanos: Int64) throws(RPCError) -> Principal {
        if let wait = failures.blocked(peer, nowNanos: nowNanos) {
            throw RPCError(
                code: .resourceExhausted,
                message: "too many failed authentications from \(peer.limitKey); retry after \(wait.wholeMillisecondsRoundedUp) ms")
        }
        let credential: Credential
        do {
            credential = try Credential(token: token)
        } catch {
            throw failed(error, credential: nil, peer: peer, nowNanos: nowNanos)
        }
        switch credentials.authenticate(credential) {
        case .success(let principal):
            return principal
        case .failure(let failure):
            throw failed(failure, credential: credential, peer: peer, nowNanos: nowNanos)
        }
    }

    /// Counts a failed authentication, logs it when a line is due (never the secret), and makes its error.
    func failed(_ failure: CredentialFailure, credential: Credential?, peer: PeerAddress, nowNanos: Int64) -> RPCError {
        if let report = failures.record(peer, nowNanos: nowNanos) {
            logger.warning("authentication failed", [
                "peer": peer.limitKey, "failures": "\(report.failures)", "reason": failure.description,
                "credential": credential?.logName ?? "none",
            ])
        }
        if failure == .malformed {
            return RPCError(code: .unauthenticated, message: "the authorization value is not a bearer token CoinWatch knows")
        }
        return RPCError(code: .unauthenticated, message: "the credential is not valid (unknown, revoked or wrong)")
    }

    /// The bucket counting calls of `principal`: per key, per device, and per address for anonymous callers.
    func bucket(for principal: Principal, peer: PeerAddress, nowNanos: Int64) -> SharedTokenBucket? {
        let limits = configuration.limits
        switch principal {
        case .key(let id, _):
            return requests.bucket(for: "key:" + id, limit: limits.keyRequestRate, nowNanos: nowNanos)
        case .device(let device):
            return requests.bucket(for: "device:" + device.rawValue, limit: limits.deviceRequestRate, nowNanos: nowNanos)
        case .anonymous:
            guard !peer.isLoopback else { return nil }
            return requests.bucket(for: "address:" + peer.limitKey, limit: limits.anonymousRequestRate, nowNanos: nowNanos)
        }
    }

    private func describe(_ principal: Principal, _ peer: PeerAddress) -> String {
        let limits = configuration.limits
        switch principal {
        case .key: return "\(principal) (\(limits.keyRequestRate) a second)"
        case .device: return "\(principal) (\(limits.deviceRequestRate) a second)"
        case .anonymous: return "anonymous callers from \(peer.limitKey) (\(limits.anonymousRequestRate) a second)"
        }
    }
}
