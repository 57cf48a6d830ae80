import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing

/// coinwatchd with live venues, as an operator runs it: `--feed binance,coinbase,kraken` pointed at local fake
/// exchanges with `--feed-url`, prices on StreamPrices and each source in Health/Check.
@Suite("coinwatchd with live venues", .timeLimit(.minutes(3)))
struct LiveFeedDaemonTests {
    @Test("three venues: StreamPrices carries their median with its source count, health shows each")
    func threeVenues() async throws {
        var exchanges: [FakeExchange] = []
        for venue in ["binance", "coinbase", "kraken"] { exchanges.append(try await FakeExchange.start(venue: venue)) }
        let urls = exchanges.map { "\($0.venue)=\($0.url(path: "/ws"))" }.joined(separator: ",")
        let server = try await ServerProcess.start(arguments: [
            "--feed", "binance,coinbase,kraken", "--feed-url", urls, "--symbols", "BTC,ETH",
        ])
        defer { server.stopInBackground() }
        for exchange in exchanges {
            #expect(await eventually { !exchange.messages.isEmpty }, "\(exchange.venue) subscribed")
        }
        let client = CoinWatchClient.ofDaemon(port: server.port)
        defer { client.close() }
        let stream = client.streamPrices(symbols: ["BTC"])
        let reader = Task {
            var updates: [V1.PriceUpdate] = []
            for try await update in stream {
                updates.append(update)
                if update.sources == 3 { break }
            }
            return updates
        }
        exchanges[0].trade("BTC", "64250.5")
        exchanges[1].trade("BTC", "64251.25")
        exchanges[2].trade("BTC", "70000")   // the outlier
        let updates = try await reader.value
        let last = try #require(updates.last)
        #expect(last.sources == 3)
        #expect(last.price == V1.Decimal(mantissa: 6_425_125, scale: 2))
        #expect(!last.stale)

        let health = try await client.healthCheck()
        #expect(health.status == .serving)
        #expect(health.feeds.map(\.name) == ["binance", "coinbase", "kraken"])
        #expect(health.feeds.allSatisfy { $0.connected && $0.reconnects == 0 && $0.lastMessageAgeMs >= 0 })

        // `coinwatch health` shows them too.
        if let cli = BuiltProducts.url(of: "coinwatch") {
            let child = try ChildProcess(cli.path, ["--server", server.address, "health"])
            await #expect(child.wait(timeout: .seconds(30)) == 0)
            // The status line, the table's head, a row per venue; then push delivery's lines.
            let lines = child.stdout.split(separator: "\n").prefix { !$0.hasPrefix("push") }
            #expect(lines.count == 5, "\(child.stdout)")
            #expect(lines.dropFirst(2).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                == ["binance yes", "coinbase yes", "kraken yes"], "\(child.stdout)")
        }
    }

    @Test("a wss:// venue with --ca-file: prices flow; without the CA file the certificate is refused")
    func secureVenue() async throws {
        let pki = try await TestCertificates.shared()
        let exchange = try await FakeExchange.start(
            venue: "kraken", certificate: (pki.server.certificateFile, pki.server.privateKeyFile))
        let url = "kraken=\(exchange.url(path: "/ws"))"
        #expect(url.hasPrefix("kraken=wss://"))
        let server = try await ServerProcess.start(arguments: [
            "--feed", "kraken", "--feed-url", url, "--symbols", "BTC", "--ca-file", pki.caFile,
        ])
        defer { server.stopInBackground() }
        #expect(await eventually { exchange.messages.count == 1 }, "\(server.log)")
        let client = CoinWatchClient.ofDaemon(port: server.port)
        defer { client.close() }
        exchange.trade("BTC", "64250.000001")
        #expect(await eventually {
            (try? await client.prices(symbols: ["BTC"]))?.first?.price == V1.Decimal(mantissa: 64_250_000_001, scale: 6)
        })
        let health = try await client.healthCheck()
        #expect(health.feeds.map(\.name) == ["kraken"])
        #expect(health.feeds.first?.connected == true)

        // The system's trust store alone does not know the test CA: the handshake fails, health says why.
        let strict = try await ServerProcess.start(arguments: ["--feed", "kraken", "--feed-url", url, "--symbols", "BTC"])
        defer { strict.stopInBackground() }
        let strictClient = CoinWatchClient.ofDaemon(port: strict.port)
        defer { strictClient.close() }
        #expect(await eventually {
            (try? await strictClient.healthCheck())?.feeds.first?.lastError.contains("certificate") == true
        })
        #expect(try await strictClient.healthCheck().feeds.first?.connected == false)
        #expect(exchange.connections == 1, "only the daemon with the CA file got through")
    }

    @Test("Finnhub's token reaches the venue but never the log, also across a reconnect")
    func finnhubTokenStaysSecret() async throws {
        let exchange = try await FakeExchange.start(venue: "finnhub")
        let secret = "fh-secret-\(UInt32.random(in: 1_000_000...9_999_999))"
        let server = try await ServerProcess.start(arguments: [
            "--feed", "finnhub", "--feed-url", "finnhub=\(exchange.url(path: "/ws"))", "--finnhub-token", secret,
            "--log-level", "debug",
        ])
        defer { server.stopInBackground() }
        #expect(await eventually { exchange.messages.count == 2 })
        exchange.send(["cmd": "drop"])
        #expect(await eventually { exchange.messages.count == 4 && server.log.contains("reconnecting") })
        #expect(exchange.paths == ["/ws?token=\(secret)", "/ws?token=\(secret)"])
        #expect(!server.log.contains(secret), "\(server.log)")
        #expect(server.log.contains("finnhub"))
    }

    @Test("the token can come from COINWATCH_FINNHUB_TOKEN")
    func finnhubTokenFromTheEnvironment() async throws {
        let exchange = try await FakeExchange.start(venue: "finnhub")
        let binary = try #require(BuiltProducts.url(of: "coinwatchd"))
        let data = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["COINWATCH_FINNHUB_TOKEN"] = "from-the-environment"
        let child = try ChildProcess(binary.path, [
            "--listen", "127.0.0.1:0", "--data", data.path + "/store", "--feed", "finnhub",
            "--feed-url", "finnhub=\(exchange.url(path: "/ws"))",
        ], environment: environment)
        #expect(await eventually { exchange.paths == ["/ws?token=from-the-environment"] }, "\(child.stderr)")
        child.signal(SIGTERM)
        await #expect(child.wait(timeout: .seconds(30)) == 0)
        #expect(!child.stderr.contains("from-the-environment"))
    }
}
