import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing

/// coinwatchd's own bad inputs, as an operator meets them: each bad flag is a usage error (exit 64) whose first
/// line names the flag and what was wrong, before anything is opened; a bad request to a running server is an
/// RPC status.
@Suite("coinwatchd usage errors", .serialized)
struct DaemonUsageTests {
    @Test("a bad flag exits 64 with a message naming it", arguments: [
        (["--listen", "nope"], "error: --listen: 'nope' is not HOST:PORT"),
        (["--listen", "127.0.0.1:70000"], "error: --listen: '127.0.0.1:70000': the port must be 0–65535 (got '70000')"),
        (["--listen", "[::1"], "error: --listen: '[::1' opens an IPv6 address with [ and does not close it"),
        (["--listen", ":0"], "error: --listen: ':0' has no host"),
        (["--listen", "::1:0"], "error: --listen: '::1:0': an IPv6 address goes in brackets"),
        (["--log-level", "loud"], "error: --log-level: 'loud' is not one of trace, debug, info, notice, warning, error"),
        (["--log-format", "xml"], "error: --log-format: 'xml' is not text or json"),
        (["--high-watermark", "10"], "error: --high-watermark: must be at least 1024"),
        (["--high-watermark", "4096", "--low-watermark", "8192"],
         "error: --low-watermark must not exceed --high-watermark"),
        (["--max-connections", "0"], "error: --max-connections: must be at least 1"),
        (["--idle-timeout", "soon"], "error: --idle-timeout: 'soon' is not a duration such as 500ms, 10s or 5m"),
        (["--feed", "bogus"], "error: --feed: feed 'bogus': unknown feed; expected none, or a comma-separated list of"),
        (["--feed", "binance,binance"], "error: --feed: feed 'binance': binance is already in the list"),
        (["--feed", "sim,none"], "error: --feed: feed 'none': 'none' cannot be combined with other sources"),
        (["--feed", "binance", "--symbols", "BTC,B@D"], "error: --symbols: must be 2–10 characters of A-Z 0-9"),
        (["--feed", "binance", "--feed-url", "binance=http://127.0.0.1:1"],
         "error: --feed-url: 'http://127.0.0.1:1' is not a WebSocket URL"),
        (["--feed", "binance", "--feed-url", "kraken=ws://127.0.0.1:1"], "error: --feed-url: kraken is not in --feed"),
        (["--feed", "binance", "--feed-url", "mars=ws://127.0.0.1:1"], "error: --feed-url: 'mars' is not a venue"),
        (["--feed", "binance", "--feed-url", "binance"], "error: --feed-url: 'binance' is not NAME=URL"),
        (["--feed", "finnhub"], "error: --finnhub-token: --feed finnhub needs an API token"),
        (["--ca-file", "/nonexistent/ca.pem"], "error: --ca-file: cannot read '/nonexistent/ca.pem'"),
        (["--ca-file", "/etc/passwd"], "error: --ca-file: cannot set up TLS for wss:// venues (CA file '/etc/passwd')"),
        (["--max-price-age", "0s"], "error: --max-price-age: must be more than 0"),
        (["--max-price-age", "soon"], "error: --max-price-age: 'soon' is not a duration"),
        (["--usd-quotes", "USD,U S"], "error: --usd-quotes: 'U S' is not a currency code"),
        (["--symbol-map", "nope"], "error: --symbol-map: 'nope' is not ALIAS=SYMBOL or VENUE:SYMBOL=INSTRUMENT"),
        (["--symbol-map", "mars:BTC=X"], "error: --symbol-map: 'mars:BTC=X': unknown venue 'mars'"),
        (["--feed-max-message-bytes", "10"], "error: --feed-max-message-bytes: must be at least 1024"),
        (["--feed", "sim@0"], "error: --feed: feed 'sim@0': the rate after '@' must be ticks per second per symbol"),
        (["--cors-origin", "https://a.example", "--cors-origin", "dash.example"],
         "error: --cors-origin: 'dash.example' is not an origin such as https://example.com or http://host:8080"),
        (["--apns-key-id", "ABC123"],
         "error: APNs delivery needs --apns-key-file, --apns-key-id, --apns-team-id, --apns-topic; missing --apns-key-file, "
             + "--apns-team-id, --apns-topic"),
        (["--apns-sandbox"], "error: --apns-sandbox needs APNs delivery: give --apns-key-file, --apns-key-id"),
        (["--apns-key-file", "k.p8", "--apns-key-id", "K", "--apns-team-id", "T", "--apns-topic", "bad topic"],
         "error: APNs: topic 'bad topic' must be a bundle id"),
        (["--apns-key-file", "k.p8", "--apns-key-id", "K", "--apns-team-id", "T", "--apns-topic", "a.b",
          "--apns-token-refresh", "2h"], "error: APNs: token refresh must be at most 50m"),
        (["--alert-hysteresis", "100"], "error: --alert-hysteresis: '100' is not a percentage from 0 to below 100"),
        (["--alert-hysteresis", "-1%"], "error: --alert-hysteresis: '-1%' is not a percentage from 0 to below 100"),
        (["--bogus"], "error: unknown option '--bogus'"),
        (["serve"], "error: unknown command 'serve'"),
    ])
    func badFlag(_ arguments: [String], _ message: String) throws {
        let data = try TemporaryDirectory()
        let result = try ServerProcess.run(arguments + ["--data", data.path + "/store"])
        #expect(result.status == 64, "output: \(result.output)")
        let firstLine = result.output.split(separator: "\n").first.map(String.init) ?? ""
        #expect(firstLine.hasPrefix(message), "output: \(result.output)")
        #expect(result.output.contains("USAGE: coinwatchd"))
        // A usage error stops before the store: nothing was created.
        #expect(!FileManager.default.fileExists(atPath: data.path + "/store"))
    }

    @Test("--help fits in 100 columns: long descriptions wrap in their column")
    func helpIsWrapped() throws {
        let result = try ServerProcess.run(["--help"])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count > 20)
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines.filter { $0.count > 100 })")
        #expect(result.output.contains("  --listen HOST:PORT"))
        #expect(result.output.contains("[env: COINWATCH_LISTEN] (default: 127.0.0.1:7878)"), "kept on one line")
    }

    @Test("start-up failures are said once, naming the address or directory once, without internal names")
    func startupFailuresSaidOnce() async throws {
        let running = try await ServerProcess.start()
        defer { running.stopInBackground() }
        let data = try TemporaryDirectory()

        // The port is taken.
        let address = "127.0.0.1:\(running.port)"
        let bind = try await ServerProcess.run(["--listen", address, "--data", data.path + "/store", "--feed", "none"])
        #expect(bind.status == 1)
        #expect(bind.output.contains("coinwatchd: cannot listen on \(address): bind failed: Address already in use (errno 98)\n"),
                "\(bind.output)")
        #expect(bind.output.components(separatedBy: address).count == 2, "the address once: \(bind.output)")

        // The data directory is in use: one line, not a log line and the same sentence again.
        let store = running.dataDirectory.path + "/db"
        let second = try await ServerProcess.run(["--listen", "127.0.0.1:0", "--data", store, "--feed", "none"])
        #expect(second.status == 1)
        #expect(second.output == "coinwatchd: the data directory \(store) is in use by another coinwatchd (or another "
            + "process holding its LOCK)\n")

        // Repairing it while the server runs says so in words.
        let repair = try await ServerProcess.run(["repair", "--data", store])
        #expect(repair.status == 1)
        #expect(repair.output == "coinwatchd: cannot repair \(store): it is in use by a running coinwatchd (or another "
            + "process holding its LOCK); stop that first\n")
        #expect(!repair.output.contains("alreadyInUse"))
    }

    @Test("a replay file that cannot be read stops the start with the path and the reason")
    func unreadableReplayFile() throws {
        let data = try TemporaryDirectory()
        let missing = data.path + "/no-such-file.csv"
        let result = try ServerProcess.run(["--feed", "replay:\(missing)", "--data", data.path + "/store"])
        #expect(result.status == 1, "output: \(result.output)")
        #expect(result.output.contains("coinwatchd: cannot start the feed: replay file \(missing):"),
                "output: \(result.output)")
    }

    @Test("Health/Check of a service the server does not have is NOT_FOUND naming it; the whole server is SERVING")
    func healthOfUnknownService() async throws {
        let server = try await ServerProcess.start(arguments: ["--feed", "none"])
        defer { server.stopInBackground() }
        let group = try EventLoopGroup(threads: 1, namePrefix: "usage-test")
        defer { group.syncShutdownGracefully() }
        let connection = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
        defer { connection.close() }
        let error = await #expect(throws: RPCError.self) {
            try await connection.unary(V1.Health.check, V1.HealthCheckRequest(service: "coinwatch.v1.Nope"))
        }
        #expect(error?.code == .notFound)
        #expect(error?.message == "unknown service 'coinwatch.v1.Nope'")
        let whole = try await connection.unary(V1.Health.check, V1.HealthCheckRequest())
        #expect(whole.status == .serving)
    }
}
