import CoinWatchCore
import CoinWatchCommandLine
import CoinWatchRPC
import CoinWatchTLS

/// How unary mode issues calls.
enum UnaryClient: String {
    /// Pre-encoded frames and a minimal reply parse, like `redis-benchmark`.
    case raw
    /// `RPCClientConnection.startUnary`, the path applications use.
    case library
}

/// The benchmark's options, shared by both modes.
struct BenchOptions {
    static let all: [OptionSpec] = [
        OptionSpec("server", .value(placeholder: "HOST:PORT"), default: "127.0.0.1:7878", help: "Server to load."),
        OptionSpec("publish-server", .value(placeholder: "HOST:PORT"),
                   help: "Stream mode: publish to this server, subscribers stay on --server (two nodes of a cluster: the latency includes the bus)."),
        OptionSpec("connections", .value(placeholder: "C"),
                   help: "Connections: unary mode (default 50); stream mode spreads subscribers over at most C (default 1000)."),
        OptionSpec("in-flight", .value(placeholder: "K"),
                   help: "Calls kept outstanding per connection (unary, default 1); PublishPrices batches outstanding (stream, default 4)."),
        OptionSpec("duration", .value(placeholder: "SECONDS"), default: "10", help: "Measured run time."),
        OptionSpec("warmup", .value(placeholder: "SECONDS"), default: "1", help: "Unmeasured run time before it."),
        OptionSpec("method", .value(placeholder: "get|save"), default: "get",
                   help: "get: GetSettings of existing devices; save: durable SaveSettings."),
        OptionSpec("client", .value(placeholder: "raw|library"), default: "raw",
                   help: "Unary mode: raw writes pre-encoded Call frames and reads End frames minimally; "
                       + "library goes through RPCClientConnection."),
        OptionSpec("devices", .value(placeholder: "N"), help: "Distinct device ids (unary default 1000, alerts default 1000000)."),
        OptionSpec("subscribers", .value(placeholder: "N"), default: "100", help: "StreamPrices subscribers (stream mode)."),
        OptionSpec("rate", .value(placeholder: "TICKS_PER_S"), default: "0",
                   help: "Ticks published per second (stream mode); 0 = as fast as the server takes them."),
        OptionSpec("symbols", .value(placeholder: "N"), default: "10", help: "Distinct symbols published (stream mode)."),
        OptionSpec("threads", .value(placeholder: "N"), default: "1", help: "Client event-loop threads."),
        OptionSpec("server-pid", .value(placeholder: "PID"),
                   help: "Idle mode: the coinwatchd process whose memory to read. Unary mode: whose threads' CPU per request to print."),
        OptionSpec("token", .value(placeholder: "TOKEN"), environment: "COINWATCH_TOKEN", help: "Credential sent in Hello: a service key (with the scopes the mode needs) when the server runs "
                       + "with --auth required, or its publish token."),
        OptionSpec("tls", .flag, help: "Connect with TLS (the server's certificate checked against the system's CAs and --ca-file)."),
        OptionSpec("ca-file", .value(placeholder: "FILE"), help: "PEM CA certificates to trust for the server (implies --tls)."),
        OptionSpec("server-name", .value(placeholder: "NAME"),
                   help: "Name the server's certificate must carry (default: the --server host; implies --tls)."),
        OptionSpec("client-cert", .value(placeholder: "FILE"), help: "PEM client certificate for mutual TLS (with --client-key)."),
        OptionSpec("client-key", .value(placeholder: "FILE"), help: "PEM private key of --client-cert."),
        OptionSpec("no-resume", .flag, help: "Handshakes mode: offer no session to resume (every handshake a full one)."),
        OptionSpec("redis", .flag, help: "Stream mode: measure the peer instead, Redis pub/sub at --server."),
        OptionSpec("out", .value(placeholder: "FILE"), help: "grpc-request mode: where to write the request."),
        OptionSpec("apns-connections", .value(placeholder: "N"), default: "1",
                   help: "Push mode: HTTP/2 connections the coinwatchd it starts keeps to the mock APNs."),
        OptionSpec("connect", .flag,
                   help: "Stream mode: subscribers use the Connect protocol over HTTP/1.1, one connection each, as browsers do."),
        OptionSpec("grpc", .flag,
                   help: "Stream mode: subscribers use gRPC over HTTP/2 (prior knowledge), one connection each, read by a lean frame reader."),
        OptionSpec("parts", .value(placeholder: "LIST"), help: "Feeds mode: ingest,latency,memory,read (default the first three)."),
        OptionSpec("plain", .flag, help: "Feeds mode: ws:// instead of wss:// (no TLS)."),
        OptionSpec("coinwatchd", .value(placeholder: "PATH"), help: "Feeds mode: the coinwatchd to run (default: beside this tool)."),
        OptionSpec("python", .value(placeholder: "PATH"), help: "Feeds mode: the test venv's python (default .build/venv/bin/python)."),
        OptionSpec("fake-exchange", .value(placeholder: "PATH"),
                   help: "Feeds mode: the fake exchange script (default scripts/feeds/fake_exchange.py)."),
        OptionSpec("nats", .value(placeholder: "nats://HOST:PORT[,…]"), help: "natsfanout mode: the NATS servers to load."),
        OptionSpec("json", .flag, help: "End with one JSON object on the last line."),
        OptionSpec("help", short: "h", .flag, help: "Show this help."),
        OptionSpec("version", .flag, help: "Show the version."),
    ]

    static let help = HelpText.render(
        usage: "coinwatch-bench <unary|stream|idle|alerts|feeds|push|handshakes|grpc-request|natsfanout> [--server HOST:PORT] [options]",
        summary: """
            Load generator and latency meter for coinwatchd.

              unary   closed loop: each connection keeps K calls outstanding for the duration;
                      reports requests/s, p50/p99/p999 latency and errors.
              stream  N StreamPrices subscribers while ticks are published; reports deliveries/s,
                      publish-to-receive latency p50/p99 and sequence gaps (--redis: Redis pub/sub instead).
              idle    holds --connections silent connections (handshake done) and reports the server's
                      resident memory per connection (needs --server-pid).
              alerts  the alert engine in process: --devices devices (default here 1,000,000) with rules on
                      BTC and ETH; per-tick p50/p99, ticks/s, index rebuild time, beside a brute-force scan.
              feeds   coinwatchd (started here) with a live venue against a local fake exchange: ingest rate
                      over wss:// beside --feed replay:…@max; send-to-StreamPrices latency at --rate (default
                      1,000/s) beside PublishPrices; resident memory under a 100 MiB message and endless
                      continuation frames. Run from the repository root after scripts/python-env.
                      --parts read: the venue side of a message (framing, JSON, symbols) in this process.
              push    starts the mock APNs and a coinwatchd delivering to it (ignores --server), registers
                      --devices devices (default here 100,000) all crossed by one tick: time from the tick to
                      the last 200, pushes/s, lost and duplicated pushes; h2load's rate to the same mock; and
                      GetSettings/s (--connections × --in-flight, --duration s) with and without the burst.
                      Run from the checkout (it uses scripts/mock-apns.py and scripts/python-env).
              grpc-request  writes to --out a gRPC-framed GetSettings request for device bench-0 (the body
                      h2load posts) after creating --devices devices (default 1) on --server.
              handshakes  new TLS connections (connect, handshake, Hello/Welcome, close), --connections at a
                      time (default 4); reports handshakes/s, with session resumption unless --no-resume.
              natsfanout  NATS's own fan-out through nats.c, no coinwatchd: one connection publishes tick-sized
                      messages as fast as the library takes them to --symbols subjects, --subscribers
                      connections (a thread each) read them as the price bus does; deliveries/s, dropped.
            """,
        options: all,
        sections: [("JSON (last line with --json)", """
              unary:  requests_per_second, p50_ms, p99_ms, p999_ms, errors, requests, connections, in_flight, method, client,
                      server_cpu_ns (with --server-pid: CPU ns per request by server thread name)
              stream: deliveries_per_second, p50_ms, p99_ms, gaps, deliveries, subscribers, ticks_published
              feeds:  ingest_live_per_second, ingest_replay_per_second, ingest_ratio, ingest_live_cpu_ns,
                      ingest_replay_cpu_ns (objects: CPU ns per message by thread name, the exchange as "exchange"),
                      latency_live_p50_ms, latency_live_p99_ms, latency_publish_p50_ms, latency_publish_p99_ms,
                      memory_baseline_bytes, memory_huge_growth_bytes, memory_endless_growth_bytes, read_ns_per_message
              handshakes: handshakes_per_second, failures, concurrency, resumption
              natsfanout: deliveries_per_second, published_per_second, dropped, subscribers, symbols
              push:   tick_to_last_200_s, pushes_per_second, delivered, duplicates, h2load_requests_per_second,
                      get_settings_quiet_per_second, get_settings_burst_per_second
            """)])

    var host: String
    var port: Int
    /// Stream mode: where the publisher connects, when not to `host`:`port`.
    var publishServer: (host: String, port: Int)?
    var connections: Int
    var connectionsGiven: Int?
    var inFlight: Int
    var publishInFlight: Int
    var duration: Double
    var warmup: Double
    var method: String
    var client: UnaryClient
    var devices: Int
    var subscribers: Int
    var rate: Double
    var symbols: Int
    var threads: Int
    var token: String
    var json: Bool
    var redis: Bool
    var connect: Bool
    var grpc: Bool
    var serverPID: Int?
    var out: String?
    /// TLS for every native connection (nil: plaintext): one context, so reconnections may resume sessions.
    var tls: TLSClientTransforms?
    /// What `tls` was made from, for the client library (`prepareDevices`).
    var tlsConfiguration: TLSConfiguration?
    var apnsConnections: Int

    init(_ parsed: ParsedArguments) throws(UsageError) {
        (host, port) = try Self.address(parsed["server"]!, flag: "server")
        publishServer = try parsed["publish-server"].map { text throws(UsageError) in try Self.address(text, flag: "publish-server") }
        func positive(_ name: String) throws(UsageError) -> Int {
            guard let value = try parsed.value(name, as: "a positive whole number", { Int($0) }), value > 0 else {
                throw UsageError("--\(name) must be a positive whole number")
            }
            return value
        }
        func seconds(_ name: String) throws(UsageError) -> Double {
            guard let value = try parsed.value(name, as: "a number of seconds", { Double($0) }), value >= 0 else {
                throw UsageError("--\(name) must be a number of seconds")
            }
            return value
        }
        connectionsGiven = parsed["connections"] == nil ? nil : try positive("connections")
        connections = connectionsGiven ?? 50
        let givenInFlight = parsed["in-flight"] == nil ? nil : try positive("in-flight")
        inFlight = givenInFlight ?? 1
        publishInFlight = givenInFlight ?? 4
        duration = try seconds("duration")
        warmup = try seconds("warmup")
        out = parsed["out"]
        method = parsed["method"]!
        guard method == "get" || method == "save" else { throw UsageError("--method must be get or save") }
        guard let client = UnaryClient(rawValue: parsed["client"]!) else { throw UsageError("--client must be raw or library") }
        self.client = client
        devices = parsed["devices"] == nil ? 0 : try positive("devices")
        subscribers = try positive("subscribers")
        rate = try seconds("rate")
        symbols = try positive("symbols")
        threads = try positive("threads")
        token = parsed["token"] ?? ""
        json = parsed.has("json")
        redis = parsed.has("redis")
        connect = parsed.has("connect")
        grpc = parsed.has("grpc")
        guard !(connect && grpc) else { throw UsageError("--connect and --grpc are two transports: give one") }
        serverPID = try parsed.value("server-pid", as: "a process id", { Int($0) })
        let caFile = parsed["ca-file"]
        let serverName = parsed["server-name"]
        let clientCertificate = parsed["client-cert"]
        let clientKey = parsed["client-key"]
        guard (clientCertificate == nil) == (clientKey == nil) else {
            throw UsageError("--client-cert and --client-key go together: give both or neither")
        }
        if parsed.has("tls") || caFile != nil || serverName != nil || clientCertificate != nil {
            guard !redis, !connect, !grpc else {
                throw UsageError("--tls applies to the native protocol only (not --redis, --connect or --grpc)")
            }
            var configuration = TLSConfiguration.client(caFile: caFile, applicationProtocols: [RPCProtocol.applicationProtocol])
            configuration.certificateChainFile = clientCertificate
            configuration.privateKeyFile = clientKey
            do {
                tls = TLSClientTransforms(context: try TLSContext(configuration), serverName: serverName)
            } catch {
                throw UsageError("--ca-file: \(error)")
            }
            tlsConfiguration = configuration
        }
        apnsConnections = try positive("apns-connections")
    }

    /// `HOST:PORT`, or a usage error naming `flag`.
    static func address(_ text: String, flag: String) throws(UsageError) -> (host: String, port: Int) {
        do {
            let address = try HostAndPort(parsing: text)
            return (address.host, address.port)
        } catch {
            throw UsageError("--\(flag): \(error.message)")
        }
    }

    /// These options with `devices` set to `count` unless given.
    func defaultingDevices(to count: Int) -> BenchOptions {
        var copy = self
        if copy.devices == 0 { copy.devices = count }
        return copy
    }
}
