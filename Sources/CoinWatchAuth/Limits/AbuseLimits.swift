/// The limits that keep one peer or one credential from taking the server for itself (`docs/SECURITY.md`).
///
/// Per remote address (an IPv4 address or an IPv6 /64; loopback peers are exempt, being the machine's own
/// processes): open connections, new connections, failed authentications, and anonymous calls. Per credential:
/// calls of each key and of each device. A rate of zero means no limit.
public struct AbuseLimits: Sendable, Hashable {
    /// Open connections one address may hold; 0 = no limit.
    public var connectionsPerAddress = 256
    /// New connections one address may open.
    public var connectionRate = RateLimit(perSecond: 20, burst: 100)
    /// Calls per service key (shared by all its connections). Keys belong to the operator's own services, so
    /// by default they are not limited.
    public var keyRequestRate = RateLimit.unlimited
    /// Calls per device secret (shared by all its connections).
    public var deviceRequestRate = RateLimit(perSecond: 20, burst: 100)
    /// Calls without a credential, per address (price reads with `--public-prices`, first claims).
    public var anonymousRequestRate = RateLimit(perSecond: 20, burst: 100)
    /// Failed authentications per address; past it, the address's attempts are refused RESOURCE_EXHAUSTED
    /// without being checked.
    public var failedAuthenticationRate = RateLimit(perSecond: 1, burst: 20)
    /// One log line per address per this interval sums up its failed authentications.
    public var failureLogInterval: Duration = .seconds(60)
    /// Addresses and credentials tracked at once; beyond, entries with nothing to remember are dropped, and if
    /// none can be, a new address or credential goes untracked (the server's global limits still hold).
    public var maxTrackedEntries = 65_536

    public init() {}
}
