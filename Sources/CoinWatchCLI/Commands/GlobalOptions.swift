import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchRPC
import CoinWatchTLS

/// The options every command takes: where the server is, how to authenticate, how long a call may
/// take, and whether to print JSON. Each also comes from a `COINWATCH_…` environment variable.
struct GlobalOptions: Sendable, Hashable {
    static let specs: [OptionSpec] = [
        OptionSpec("server", .value(placeholder: "HOST:PORT"), environment: "COINWATCH_SERVER", default: "127.0.0.1:7878",
                   help: "Address of coinwatchd."),
        OptionSpec("token", .value(placeholder: "TOKEN"), environment: "COINWATCH_TOKEN",
                   help: "Auth token sent when connecting (publish may need it)."),
        OptionSpec("tls", .flag, environment: "COINWATCH_TLS",
                   help: "Connect with TLS, checking the server's certificate (system CAs plus --ca-file)."),
        OptionSpec("ca-file", .value(placeholder: "FILE"), environment: "COINWATCH_CA_FILE",
                   help: "PEM CA certificates to trust for the server's certificate (implies --tls)."),
        OptionSpec("server-name", .value(placeholder: "NAME"), environment: "COINWATCH_SERVER_NAME",
                   help: "Name the server's certificate must carry (default: the --server host; implies --tls)."),
        OptionSpec("client-cert", .value(placeholder: "FILE"), environment: "COINWATCH_CLIENT_CERT",
                   help: "PEM client certificate for mutual TLS (with --client-key; implies --tls)."),
        OptionSpec("client-key", .value(placeholder: "FILE"), environment: "COINWATCH_CLIENT_KEY",
                   help: "PEM private key of --client-cert."),
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
    /// TLS to the server (nil: plaintext).
    var tls: TLSOptions?

    /// `--tls` and its settings.
    struct TLSOptions: Sendable, Hashable {
        var caFile: String?
        var serverName: String?
        var clientCertificate: String?
        var clientKey: String?

        /// Reads the files now, so a mistyped path or a file that is not PEM is a usage error naming its flag
        /// (exit 64), not a failure to reach the server (exit 3) after the command has started.
        func checkFiles() throws(UsageError) {
            if let caFile {
                do {
                    _ = try TLSContext(TLSConfiguration.client(caFile: caFile))
                } catch {
                    throw UsageError("--ca-file: \(error.message)")
                }
            }
            if let clientCertificate, let clientKey {
                var configuration = TLSConfiguration.client(caFile: nil)
                configuration.certificateChainFile = clientCertificate
                configuration.privateKeyFile = clientKey
                do {
                    _ = try TLSContext(configuration)
                } catch {
                    throw UsageError("--client-cert / --client-key: \(error.message)")
                }
            }
        }
    }

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
        func path(_ name: String) -> String? { parsed[name].flatMap { $0.isEmpty ? nil : $0 } }
        let settings = TLSOptions(
            caFile: path("ca-file"), serverName: path("server-name"), clientCertificate: path("client-cert"),
            clientKey: path("client-key"))
        guard (settings.clientCertificate == nil) == (settings.clientKey == nil) else {
            throw UsageError("--client-cert and --client-key go together: give both or neither")
        }
        tls = parsed.has("tls") || settings != TLSOptions() ? settings : nil
        if let tls = tls { try tls.checkFiles() }
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
        if let tls {
            var client = TLSConfiguration.client(caFile: tls.caFile)
            client.certificateChainFile = tls.clientCertificate
            client.privateKeyFile = tls.clientKey
            configuration.tls = client
            configuration.tlsServerName = tls.serverName
        }
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
        if let tls {
            environment["COINWATCH_TLS"] = "1"
            environment["COINWATCH_CA_FILE"] = tls.caFile
            environment["COINWATCH_SERVER_NAME"] = tls.serverName
            environment["COINWATCH_CLIENT_CERT"] = tls.clientCertificate
            environment["COINWATCH_CLIENT_KEY"] = tls.clientKey
        }
        return environment
    }
}
