import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

let usage = "coinwatch-bench <unary|stream|idle|alerts|feeds|push|handshakes|grpc-request|natsfanout> [--server HOST:PORT] [options]"

CommandRunner.run(usage: "USAGE: \(usage)\nRun 'coinwatch-bench --help' for the options.") {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let parsed = try ParsedArguments.parse(arguments, options: BenchOptions.all, environment: [:])
    if parsed.has("help") || arguments.isEmpty {
        print(BenchOptions.help, terminator: "")
        return 0
    }
    if parsed.has("version") {
        print("coinwatch-bench \(CoinWatchVersion.current)")
        return 0
    }
    let options = try BenchOptions(parsed)
    switch parsed.positionals.first {
    case "unary":
        return try UnaryBenchmark(options: options.defaultingDevices(to: 1000)).run()
    case "stream":
        return try StreamBenchmark(options: options).run()
    case "idle":
        return try IdleBenchmark(options: options).run()
    case "alerts":
        return try AlertBenchmark(options: options).run()
    case "feeds":
        return try FeedBenchmark(options: options, feed: FeedBenchOptions(parsed, options)).run()
    case "push":
        return try PushBenchmark(options: options.defaultingDevices(to: 100_000)).run()
    case "grpc-request":
        return try GRPCRequestFile(options: options.defaultingDevices(to: 1)).run()
    case "handshakes":
        return try HandshakeBenchmark(options: options, resumes: !parsed.has("no-resume")).run()
    case "natsfanout":
        guard let servers = parsed["nats"]?.split(separator: ",").map(String.init), !servers.isEmpty else {
            throw UsageError("natsfanout needs --nats nats://HOST:PORT[,…]")
        }
        return try NATSFanoutBenchmark(options: options, servers: servers).run()
    case let other?:
        throw UsageError("unknown mode '\(other)'; expected unary, stream, idle, alerts, feeds, push, handshakes, grpc-request or natsfanout")
    case nil:
        throw UsageError("missing mode: unary, stream, idle, alerts, feeds, push, handshakes, grpc-request or natsfanout")
    }
}
