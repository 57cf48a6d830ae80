import CoinWatchAuth
import CoinWatchCommandLine

/// coinwatchd's authorisation and abuse-limit options (docs/SECURITY.md).
struct SecurityOptions {
    static let defaults = AbuseLimits()

    static let all: [OptionSpec] = [
        OptionSpec("auth", .value(placeholder: "required|off"), environment: "COINWATCH_AUTH",
                   help: "Whether calls need a credential (a service key or a device's secret; docs/SECURITY.md). "
                       + "Default: off when every listener is on a loopback address; a server listening anywhere "
                       + "else refuses to start until this is given."),
        OptionSpec("public-prices", .flag, environment: "COINWATCH_PUBLIC_PRICES",
                   help: "Let callers without a credential read prices (GetPrices, StreamPrices)."),
        OptionSpec("max-connections-per-address", .value(placeholder: "N"),
                   environment: "COINWATCH_MAX_CONNECTIONS_PER_ADDRESS", default: "\(defaults.connectionsPerAddress)",
                   help: "Open connections one remote address (an IPv4 address, an IPv6 /64) may hold; 0 = no "
                       + "limit. Loopback peers are exempt from every per-address limit."),
        OptionSpec("connection-rate", .value(placeholder: "N[/BURST]"), environment: "COINWATCH_CONNECTION_RATE",
                   default: defaults.connectionRate.description,
                   help: "New connections per second per remote address, in bursts of up to BURST (default 2N)."),
        OptionSpec("device-rate", .value(placeholder: "N[/BURST]"), environment: "COINWATCH_DEVICE_RATE",
                   default: defaults.deviceRequestRate.description, help: "Calls per second per device secret."),
        OptionSpec("key-rate", .value(placeholder: "N[/BURST]"), environment: "COINWATCH_KEY_RATE",
                   default: defaults.keyRequestRate.description, help: "Calls per second per service key (0 = no limit)."),
        OptionSpec("anonymous-rate", .value(placeholder: "N[/BURST]"), environment: "COINWATCH_ANONYMOUS_RATE",
                   default: defaults.anonymousRequestRate.description,
                   help: "Calls per second without a credential, per remote address (with authorisation required)."),
        OptionSpec("failed-auth-rate", .value(placeholder: "N[/BURST]"), environment: "COINWATCH_FAILED_AUTH_RATE",
                   default: defaults.failedAuthenticationRate.description,
                   help: "Failed authentications per second per remote address; past it, its attempts are refused."),
    ]

    /// The mode asked for; nil to decide from the listen addresses.
    var requestedMode: AuthMode?
    var authorizer = Authorizer.Configuration()

    init(_ parsed: ParsedArguments) throws(UsageError) {
        if let text = parsed["auth"] {
            guard let mode = AuthMode(rawValue: text) else { throw UsageError("--auth: '\(text)' is not required or off") }
            requestedMode = mode
        }
        authorizer.publicPrices = parsed.has("public-prices")
        func rate(_ name: String) throws(UsageError) -> RateLimit {
            try parsed.value(name, as: "a rate such as 20 or 20/100 (calls a second / burst)", RateLimit.init(text:))!
        }
        guard let perAddress = Int(parsed["max-connections-per-address"]!), perAddress >= 0 else {
            throw UsageError("--max-connections-per-address: '\(parsed["max-connections-per-address"]!)' is not a whole number ≥ 0")
        }
        authorizer.limits.connectionsPerAddress = perAddress
        authorizer.limits.connectionRate = try rate("connection-rate")
        authorizer.limits.deviceRequestRate = try rate("device-rate")
        authorizer.limits.keyRequestRate = try rate("key-rate")
        authorizer.limits.anonymousRequestRate = try rate("anonymous-rate")
        authorizer.limits.failedAuthenticationRate = try rate("failed-auth-rate")
    }
}
