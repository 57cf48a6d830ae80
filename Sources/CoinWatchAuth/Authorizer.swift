import CoinWatchCore
public import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC
import Synchronization

/// Decides, before any handler runs, whether a call may go ahead: the same rules for every transport, plugged into
/// the server's dispatcher as its `CallAuthorizer`.
///
/// The outcome is one of: allowed; UNAUTHENTICATED when the call has no valid credential and needs one;
/// PERMISSION_DENIED when the credential is valid but does not allow the call; RESOURCE_EXHAUSTED, with a retry
/// hint, when a limit is hit; INVALID_ARGUMENT when a device call's request does not say which device.
/// `docs/SECURITY.md` is the specification.
public final class Authorizer: CallAuthorizer {
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
    /// Open and new connections per address: the server's `ConnectionAdmission`.
    public let connections: ConnectionLimiter
    let requests: RequestLimiter
    let failures: FailureTracker
    let cache = CredentialCache()
    let streams = AuthorizedStreams()
    let counters = AuthCounters()
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
        let streams = self.streams
        credentials.onInvalidation { [weak self] in
            guard let self else { return }
            streams.revalidate({ [weak self] grant in self?.isStillValid(grant) ?? false }, error: Self.revokedStream)
        }
    }

    // MARK: CallAuthorizer

    public func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
        try authorize(request, nowNanos: nil)
    }

    /// Checks one call.
    ///
    /// - Parameters:
    ///   - request: the method, the call's context (its `authorization` metadata or header, else the connection's
    ///     `Hello` token; its transport and peer) and the request's bytes (for the device of a device method).
    ///   - nowNanos: a monotonic clock in nanoseconds for the rate limits; read when needed if nil.
    /// - Returns: what the call was allowed as.
    @discardableResult
    public func authorize(_ request: CallAuthorizationRequest, nowNanos: Int64?) throws(RPCError) -> Grant {
        let method = request.method
        let context = request.context
        guard configuration.mode == .required else {
            return try authorizeWithAuthOff(method: method, context: context, nowNanos: nowNanos)
        }
        let (grant, bucket, peer) = try resolve(context, nowNanos: nowNanos)
        if let bucket, let wait = bucket.take(nowNanos: nowNanos ?? MonotonicClock.nanoseconds()) {
            throw RPCError(
                code: .resourceExhausted,
                message: "too many calls for \(describe(grant.principal, peer ?? PeerAddress(context.peer))); "
                    + "retry after \(wait.wholeMillisecondsRoundedUp) ms")
        }
        try decide(request, principal: grant.principal)
        return grant
    }

    /// With authorisation off, only `PublishPrices` is checked, and only when a `--publish-token` is set: the
    /// behaviour of servers before keys existed.
    private func authorizeWithAuthOff(method: String, context: ServerContext, nowNanos: Int64?) throws(RPCError) -> Grant {
        guard credentials.hasPublishToken, method == V1.CoinWatch.publishPrices.path else { return .unchecked }
        let grant: Grant
        do {
            grant = try resolve(context, nowNanos: nowNanos).grant
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
    func decide(_ request: CallAuthorizationRequest, principal: Principal) throws(RPCError) {
        let method = request.method
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
                guard try RequestDevice.matches(request, field: field, device: device) else {
                    throw RPCError(code: .permissionDenied, message: "this device secret is for device '\(device)', not the one in the request")
                }
            case .anonymous:
                if claims {
                    let device = try RequestDevice.device(request, field: field)
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

    // MARK: Credentials

    /// The credential a call carries: its `authorization` metadata or header, else the connection's `Hello` token.
    static func credential(of context: ServerContext) -> (value: String, source: AuthorizationValue.Source) {
        if let value = context.metadata["authorization"], !value.isEmpty {
            return (value, context.transport == "native" ? .native : .http)
        }
        return (context.authToken, .native)
    }

    /// Who the call comes from, the bucket its calls count against, and its peer when that had to be parsed.
    func resolve(_ context: ServerContext, nowNanos: Int64?) throws(RPCError)
        -> (grant: Grant, bucket: SharedTokenBucket?, peer: PeerAddress?)
    {
        let (value, source) = Self.credential(of: context)
        let generation = credentials.generation
        /// A call without a credential: it counts against its address's anonymous bucket.
        func anonymous() -> (grant: Grant, bucket: SharedTokenBucket?, peer: PeerAddress?) {
            let peer = cache.peer(context.peer, generation: generation) {
                let address = PeerAddress(context.peer)
                return CredentialCache.PeerEntry(
                    address: address, bucket: self.bucket(for: .anonymous, peer: address, nowNanos: nowNanos),
                    generation: generation)
            }
            return (Grant(principal: .anonymous, token: "", generation: generation), peer.bucket, peer.address)
        }
        guard !value.isEmpty else { return anonymous() }
        if let entry = cache.entry(for: value, generation: generation) {
            return (Grant(principal: entry.principal, token: value, generation: generation), entry.bucket, nil)
        }
        let peer = PeerAddress(context.peer)
        let token: String?
        do {
            token = try AuthorizationValue.token(in: value, source: source)
        } catch {
            // A malformed value is a failed authentication like a wrong secret: throttled the same way.
            try checkNotThrottled(peer, nowNanos: nowNanos)
            throw failed(error, credential: nil, peer: peer, nowNanos: nowNanos)
        }
        // Only spaces: no credential, limited like any anonymous call.
        guard let token else { return anonymous() }
        let principal = try authenticate(token, peer: peer, nowNanos: nowNanos)
        let calls = bucket(for: principal, peer: peer, nowNanos: nowNanos)
        cache.store(CredentialCache.Entry(principal: principal, bucket: calls, generation: generation), for: value)
        return (Grant(principal: principal, token: value, generation: generation), calls, peer)
    }

    /// Whether a call allowed earlier (a stream) may still go on: false once its key is revoked or its device
    /// reset. Costs one atomic load while nothing has changed.
    public func isStillValid(_ grant: Grant) -> Bool {
        guard grant.principal != .anonymous, grant.generation != credentials.generation else { return true }
        guard let token = try? AuthorizationValue.token(in: grant.token, source: .native),
              let credential = try? Credential(token: Array(token.utf8)) else { return false }
        return (try? credentials.authenticate(credential).get()) == grant.principal
    }

    /// Checks a token, counting and logging a failure.
    func authenticate(_ token: String, peer: PeerAddress, nowNanos: Int64?) throws(RPCError) -> Principal {
        try checkNotThrottled(peer, nowNanos: nowNanos)
        let credential: Credential
        do {
            credential = try Credential(token: Array(token.utf8))
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

    /// Refuses, without checking anything, an address past its rate of failed authentications.
    func checkNotThrottled(_ peer: PeerAddress, nowNanos: Int64?) throws(RPCError) {
        if let wait = failures.blocked(peer, nowNanos: nowNanos ?? MonotonicClock.nanoseconds()) {
            counters.throttled.add(1, ordering: .relaxed)
            throw RPCError(
                code: .resourceExhausted,
                message: "too many failed authentications from \(peer.limitKey); retry after \(wait.wholeMillisecondsRoundedUp) ms")
        }
    }

    /// Counts a failed authentication, logs it when a line is due (never the secret), and makes its error.
    func failed(_ failure: CredentialFailure, credential: Credential?, peer: PeerAddress, nowNanos: Int64?) -> RPCError {
        counters.count(failure)
        if let report = failures.record(peer, nowNanos: nowNanos ?? MonotonicClock.nanoseconds()) {
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

    // MARK: Limits

    /// The bucket counting calls of `principal`: per key, per device, and per address for anonymous callers.
    func bucket(for principal: Principal, peer: PeerAddress, nowNanos: Int64?) -> SharedTokenBucket? {
        let limits = configuration.limits
        let identity: String
        let limit: RateLimit
        switch principal {
        case .key(let id, _):
            (identity, limit) = ("key:" + id, limits.keyRequestRate)
        case .device(let device):
            (identity, limit) = ("device:" + device.rawValue, limits.deviceRequestRate)
        case .anonymous:
            guard !peer.isLoopback else { return nil }
            (identity, limit) = ("address:" + peer.limitKey, limits.anonymousRequestRate)
        }
        guard !limit.isUnlimited else { return nil }
        return requests.bucket(for: identity, limit: limit, nowNanos: nowNanos ?? MonotonicClock.nanoseconds())
    }

    private func describe(_ principal: Principal, _ peer: PeerAddress) -> String {
        let limits = configuration.limits
        switch principal {
        case .key: return "\(principal) (\(limits.keyRequestRate.phrase))"
        case .device: return "\(principal) (\(limits.deviceRequestRate.phrase))"
        case .anonymous: return "anonymous callers from \(peer.limitKey) (\(limits.anonymousRequestRate.phrase))"
        }
    }

    // MARK: Streams

    /// The methods with every stream registered as it starts, so that revoking its credential ends it.
    public func guardingStreams(_ methods: [RPCMethod]) -> [RPCMethod] {
        guard configuration.mode == .required else { return methods }
        return methods.map { method in
            method.observingStreams { [weak self] stream in self?.streamStarted(stream) }
        }
    }

    static let revokedStream = RPCError(
        code: .unauthenticated, message: "the credential this stream was opened with was revoked")

    /// Loop: a stream the dispatcher just allowed starts. Its credential was checked a moment ago, so this finds it
    /// in the cache. Fails closed: a credential that stopped holding since that check (revoked in between) ends the
    /// stream, and so does an invalidation that came before the stream was registered, which the revalidation it
    /// started did not see.
    private func streamStarted(_ stream: ServerStream) {
        let grant: Grant
        do {
            grant = try resolve(stream.context, nowNanos: nil).grant
        } catch {
            stream.finish(error)
            return
        }
        guard grant.principal != .anonymous else { return }
        streams.add(stream, grant)
        if !isStillValid(grant) { stream.finish(Self.revokedStream) }
    }
}

/// What a call was allowed as: the principal, and what is needed to tell later whether it still may (a stream
/// outlives the check made when it started).
public struct Grant: Sendable, Hashable {
    public let principal: Principal
    /// The raw authorization value checked (a secret: never logged).
    let token: String
    let generation: UInt64

    /// A grant for calls that were not checked (authorisation off).
    public static let unchecked = Grant(principal: .anonymous, token: "", generation: 0)
}

extension ConnectionLimiter: ConnectionAdmission {
    public func admit(peer: String) -> RPCError? {
        admit(PeerAddress(peer), nowNanos: MonotonicClock.nanoseconds())
    }

    public func closed(peer: String) {
        closed(PeerAddress(peer))
    }
}
