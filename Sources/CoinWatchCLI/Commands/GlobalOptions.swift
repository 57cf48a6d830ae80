import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchRPC

/// The options every command takes: where the server is, how to authenticate, how long a call may
/// take, and whether to print JSON. Each also comes from a `COINWATCH_…` environment variable.
struct GlobalOptions: Sendable, Hashable {
    static let specs: [OptionSpec] = [
        OptionSpec("server", .value(placeholder: "HOST:PORT"), environment: "COINWATCH_SERVER", default: "127.0.0.1:7878",
                   help: "Address of coinwatchd."),
        OptionSpec("token", .value(placeholder: "TOKEN"), environment: "COINWATCH_TOKEN",
                   help: "Auth token sent when connecting (publish may need it)."),
        OptionSpec("timeout", .value(placeholder: "DURATION"), environment: "COINWATCH_TIMEOUT", default: "10s",
                   help: "Deadline of each call and of connecting, e.g. 500ms, 10s, 1m."),
        OptionSpec("json", .flag, environment: "COINWATCH_JSON",
                   help: "Print JSON: one object per result, one per line for streams."),
        OptionSpec("help", short: "h", .flag, help: "Show help (also: coinwatch help COMMAND)."),
        OptionSpec("version", .flag, help: "Show the version."),
    ]

    /// Where the server is.
    var server: String
    var token: String
    /// Per-call deadline, also used to bound connecting.
    var timeout: Duration
    var json: Bool

    init(
        server: String = "127.0.0.1:7878", token: String = "", timeout: Duration = .seconds(10), json: Bool = false
    ) {
        self.server = server
        self.token = token
        self.timeout = timeout
        self.json = json
    }

    /// Reads the global options out of a parsed command line (environment and defaults already applied).
    init(_ parsed: ParsedArguments) throws(UsageError) {
        server = parsed["server"] ?? "127.0.0.1:7878"
        token = parsed["token"] ?? ""
        guard let timeout = try parsed.value("timeout", as: "a duration such as 500ms, 10s or 1m", DurationText.parse),
              timeout > .zero else {
            throw UsageError("--timeout must be a duration above zero, such as 500ms, 10s or 1m")
        }
        self.timeout = timeout
        json = parsed.has("json")
        do {
            _ = try CoinWatchClient.Configuration(address: server)
        } catch {
            throw UsageError("--server: \(error.message)")
        }
    }

    /// The client configuration these options describe.
    var clientConfiguration: CoinWatchClient.Configuration {
        // Validated in init(_:); a hand-built value with a bad address falls back to the default.
        var configuration = (try? CoinWatchClient.Configuration(address: server)) ?? CoinWatchClient.Configuration()
        configuration.token = token
        configuration.defaultTimeout = timeout
        configuration.connectTimeout = timeout
        return configuration
    }

    /// The environment under which parsing a shell line yields these options as defaults, so a line
    /// may override any of them (`prices --json`) and otherwise inherits the session's.
    var asEnvironment: [String: String] {
        var environment = [
            "COINWATCH_SERVER": server,
            "COINWATCH_TIMEOUT": DurationText.format(timeout),
        ]
        if !token.isEmpty { environment["COINWATCH_TOKEN"] = token }
        if json { environment["COINWATCH_JSON"] = "1" }
        return environment
    }
}
