import CoinWatchCluster
import CoinWatchCommandLine
import CoinWatchFeeds
import CoinWatchLogging
import CoinWatchRPC

/// coinwatchd's options: each flag also settable through a `COINWATCH_…` variable.
struct DaemonOptions {
    static let all: [OptionSpec] = ListenOptions.all + [
        OptionSpec("data", .value(placeholder: "DIR"), environment: "COINWATCH_DATA", default: "./coinwatch-data",
                   help: "LevelDB data directory (created if missing)."),
        OptionSpec("feed", .value(placeholder: "FEED,…"), environment: "COINWATCH_FEED", default: "sim",
                   help: "Price sources, comma-separated: sim[:SEED][@TICKS_PER_SECOND] (random walk, seed 1 and 10 "
                       + "ticks/s per symbol by default), replay:FILE[@SPEED][,loop] (CSV timestamp,symbol,price or "
                       + "exchange message JSON lines; SPEED 0 = as fast as possible), the live venues finnhub, binance, "
                       + "coinbase[:ticker], kraken[:ticker]; or none (PublishPrices only). Several sources: the median "
                       + "of their fresh prices (docs/FEEDS.md)."),
    ] + feedOptions + [
        OptionSpec("publish-token", .value(placeholder: "TOKEN"), environment: "COINWATCH_PUBLISH_TOKEN",
                   help: "Require this token for PublishPrices (Hello auth_token or 'authorization' metadata, as 'Bearer TOKEN' or bare)."),
        OptionSpec("cors-origin", .value(placeholder: "ORIGIN"), environment: "COINWATCH_CORS_ORIGIN",
                   help: "Let web pages from ORIGIN (https://host[:port], or * for any) call the Connect API from a browser; "
                       + "repeat for several (the variable takes a comma-separated list). None by default: only the dashboard "
                       + "coinwatchd serves itself."),
        OptionSpec("log-level", .value(placeholder: "LEVEL"), environment: "COINWATCH_LOG_LEVEL", default: "info",
                   help: "trace, debug, info, notice, warning or error."),
        OptionSpec("log-format", .value(placeholder: "text|json"), environment: "COINWATCH_LOG_FORMAT", default: "text",
                   help: "Log line format."),
        OptionSpec("threads", .value(placeholder: "N"), environment: "COINWATCH_THREADS",
                   help: "Event-loop threads (default: one per core the process may use, after CPU affinity and quota)."),
        OptionSpec("max-connections", .value(placeholder: "N"), environment: "COINWATCH_MAX_CONNECTIONS", default: "16384",
                   help: "Connections beyond this are refused."),
        OptionSpec("max-calls", .value(placeholder: "N"), environment: "COINWATCH_MAX_CALLS", default: "1024",
                   help: "Live calls per connection."),
        OptionSpec("max-frame-bytes", .value(placeholder: "BYTES"), environment: "COINWATCH_MAX_FRAME_BYTES", default: "4194304",
                   help: "Largest frame accepted."),
        OptionSpec("handshake-timeout", .value(placeholder: "DURATION"), environment: "COINWATCH_HANDSHAKE_TIMEOUT", default: "10s",
                   help: "Time a new connection has to send Hello."),
        OptionSpec("idle-timeout", .value(placeholder: "DURATION"), environment: "COINWATCH_IDLE_TIMEOUT", default: "5m",
                   help: "Close connections silent this long (0 = never)."),
        OptionSpec("high-watermark", .value(placeholder: "BYTES"), environment: "COINWATCH_HIGH_WATERMARK", default: "1048576",
                   help: "Queued output above which a connection is slowed."),
        OptionSpec("low-watermark", .value(placeholder: "BYTES"), environment: "COINWATCH_LOW_WATERMARK", default: "262144",
                   help: "Queued output at which it is writable again."),
        OptionSpec("slow-consumer-timeout", .value(placeholder: "DURATION"), environment: "COINWATCH_SLOW_CONSUMER_TIMEOUT",
                   default: "10s", help: "Close connections stuck above the high watermark this long."),
        OptionSpec("shutdown-grace", .value(placeholder: "DURATION"), environment: "COINWATCH_SHUTDOWN_GRACE", default: "10s",
                   help: "Time in-flight calls get on SIGTERM/SIGINT."),
    ] + SecurityOptions.all + PushOptions.all + [
        OptionSpec("help", short: "h", .flag, help: "Show this help."),
        OptionSpec("version", .flag, help: "Show the version."),
    ]

    static let usage = "coinwatchd [options]\n       coinwatchd repair --data DIR\n       coinwatchd keys|devices … (see coinwatchd keys --help)"

    static let help = HelpText.render(
        usage: usage,
        summary: """
            Serves device price-alert settings (LevelDB), live prices and threshold alerts over the
            CoinWatch protocol (docs/PROTOCOL.md). SIGTERM or SIGINT shuts down gracefully; a second
            signal exits at once. SIGHUP reloads the TLS certificate and key (docs/SECURITY.md).
            """,
        options: all + cluster,
        sections: [("COMMANDS", """
              (none)    serve
              repair    recover what LevelDB can from a damaged data directory, then exit
              keys      create, list and revoke service keys (coinwatchd keys --help)
              devices   reset a device's secret (coinwatchd keys --help)
            """)])

    /// Everything but the listeners, which `listen` adds once the TLS context is made.
    var rpc = RPCServer.Configuration()
    var listen: ListenOptions
    var dataDirectory: String
    var feed: FeedSpec
    var feedConfiguration: FeedSet.Configuration
    var publishToken: String?
    var corsOrigins: [String]
    var security: SecurityOptions
    var logLevel: Logger.Level
    var logFormat: Logger.Format
    /// Set by `--cluster`: this node's part in a cluster (docs/SCALING.md).
    var cluster: ClusterNode.Configuration?
    var push: PushOptions

    init(_ parsed: ParsedArguments) throws(UsageError) {
        listen = try ListenOptions(parsed)
        dataDirectory = parsed["data"]!
        do {
            // Checked here so a mistyped feed is a usage error (exit 64) before the store is opened;
            // whether a replay file can be read is known only when the feed is made.
            feed = try FeedSpec(parsing: parsed["feed"]!)
        } catch {
            throw UsageError("--feed: \(error.message)")
        }
        feedConfiguration = try Self.feedConfiguration(parsed, feed: feed)
        func number(_ name: String, minimum: Int = 1) throws(UsageError) -> Int? {
            guard let value = try parsed.value(name, as: "a whole number ≥ \(minimum)", { Int($0) }) else { return nil }
            guard value >= minimum else { throw UsageError("--\(name): must be at least \(minimum)") }
            return value
        }
        func duration(_ name: String) throws(UsageError) -> Duration {
            try parsed.value(name, as: "a duration such as 500ms, 10s or 5m", DurationText.parse)!
        }
        if let threads = try number("threads") { rpc.eventLoopThreads = threads }
        rpc.maxConnections = try number("max-connections")!
        rpc.maxConcurrentCallsPerConnection = try number("max-calls")!
        rpc.maxFrameBytes = try number("max-frame-bytes", minimum: 1024)!
        rpc.handshakeTimeout = try duration("handshake-timeout")
        rpc.idleTimeout = try duration("idle-timeout")
        rpc.highWatermark = try number("high-watermark", minimum: 1024)!
        rpc.lowWatermark = try number("low-watermark", minimum: 0)!
        guard rpc.lowWatermark <= rpc.highWatermark else { throw UsageError("--low-watermark must not exceed --high-watermark") }
        rpc.slowConsumerTimeout = try duration("slow-consumer-timeout")
        rpc.shutdownGracePeriod = try duration("shutdown-grace")
        publishToken = parsed["publish-token"].flatMap { $0.isEmpty ? nil : $0 }
        corsOrigins = parsed.all("cors-origin").flatMap { $0.split(separator: ",") }
            .map { String($0.trimmingPrefix(" ")) }.filter { !$0.isEmpty }
        for origin in corsOrigins where origin != "*" {
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.dropFirst(8).contains("/") else {
                throw UsageError("--cors-origin: '\(origin)' is not an origin such as https://example.com or http://host:8080")
            }
        }
        guard let level = Logger.Level(name: parsed["log-level"]!) else {
            throw UsageError("--log-level: '\(parsed["log-level"]!)' is not one of trace, debug, info, notice, warning, error")
        }
        logLevel = level
        guard let format = Logger.Format(rawValue: parsed["log-format"]!) else {
            throw UsageError("--log-format: '\(parsed["log-format"]!)' is not text or json")
        }
        logFormat = format
        security = try SecurityOptions(parsed)
        cluster = try Self.clusterConfiguration(parsed, listen: listen.addresses.first?.hostAndPort ?? "127.0.0.1:7878")
        push = try PushOptions(parsed)
    }
}
