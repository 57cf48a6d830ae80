import CoinWatchLogging
import CoinWatchModel
import CoinWatchService
import CoinWatchTestSupport
import Foundation
import Testing
@testable import CoinWatchFeeds

/// Live venues over real sockets against local fake exchanges (scripts/feeds/fake_exchange.py): subscriptions,
/// exact prices into the hub, reconnects, staleness, every fault, and the median of three venues.
@Suite(.timeLimit(.minutes(3)))
struct LiveFeedTests {
    typealias F = PriceFixtures

    /// A hub fed by `venues` (fake exchanges by venue name) through a FeedSet with short timings.
    final class Rig: Sendable {
        let hub: PriceHub
        let feeds: FeedSet
        let exchanges: [String: FakeExchange]

        init(_ spec: String, exchanges: [FakeExchange], symbols: [String] = ["BTC", "ETH"],
             maxAge: Duration = .seconds(30), deadline: Duration = .seconds(30), caFile: String? = nil) throws {
            hub = try PriceHub()
            var configuration = FeedSet.Configuration()
            configuration.symbols = symbols.map { F.symbol($0) }
            configuration.aggregation.maxAge = maxAge
            configuration.backoff = Backoff.Configuration(base: .milliseconds(50), cap: .milliseconds(400),
                                                          errorFloor: .milliseconds(100))
            configuration.finnhubToken = "test-token"
            configuration.caFile = caFile
            var byName: [String: FakeExchange] = [:]
            for exchange in exchanges {
                byName[exchange.venue] = exchange
                configuration.urls[exchange.venue] = exchange.url(path: "/ws")
                configuration.liveness[exchange.venue] = VenueLiveness(deadline: deadline, pingAfter: deadline / 3)
            }
            self.exchanges = byName
            feeds = try FeedSet(
                spec: try FeedSpec(parsing: spec), hub: hub, configuration: configuration,
                logger: Logger(label: "live-feed-test", level: .warning))
            feeds.start()
        }

        func stats(_ name: String) -> PriceSourceStats? {
            feeds.sourceStats.first { $0.name == name }
        }

        func price(_ symbol: String) -> PriceTick? {
            hub.latestPrice(of: F.symbol(symbol))
        }

        func stop() {
            feeds.stop()
            hub.close()
        }
    }

    /// Runs `send` every 200 ms until `condition` holds (true) or 60 s pass (false): for conditions on fresh prices,
    /// which a single send cannot promise on a machine that may be slow to deliver or to look.
    static func resending(_ send: () -> Void, until condition: () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let until = clock.now + .seconds(60)
        while clock.now < until {
            send()
            try? await Task.sleep(for: .milliseconds(200))
            if condition() { return true }
        }
        return false
    }

    static func subscribed(_ exchange: FakeExchange, count: Int = 1) async -> Bool {
        await eventually { exchange.messages.count >= count }
    }

    @Test(arguments: ["binance", "coinbase", "kraken", "finnhub"], [false, true])
    func aVenuesTradesReachTheHubExactly(_ venue: String, overTLS: Bool) async throws {
        let pki = overTLS ? try await TestCertificates.shared() : nil
        let exchange = try await FakeExchange.start(
            venue: venue, certificate: pki.map { ($0.server.certificateFile, $0.server.privateKeyFile) })
        #expect(exchange.url().hasPrefix(overTLS ? "wss://" : "ws://"))
        let rig = try Rig(venue, exchanges: [exchange], caFile: pki?.caFile)
        defer { rig.stop() }
        #expect(await Self.subscribed(exchange, count: venue == "finnhub" ? 2 : 1))
        let expected: [String: [String]] = [
            "binance": [#"{"method":"SUBSCRIBE","params":["btcusdt@trade","ethusdt@trade"],"id":1}"#],
            "coinbase": [#"{"type":"subscribe","product_ids":["BTC-USD","ETH-USD"],"channels":["matches","heartbeat"]}"#],
            "kraken": [#"{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD","ETH/USD"],"snapshot":false},"req_id":1}"#],
            "finnhub": [#"{"type":"subscribe","symbol":"BINANCE:BTCUSDT"}"#, #"{"type":"subscribe","symbol":"BINANCE:ETHUSDT"}"#],
        ]
        #expect(exchange.messages == expected[venue])
        if venue == "finnhub" { #expect(exchange.paths == ["/ws?token=test-token"]) }
        exchange.trade("BTC", "64250.12345678")
        exchange.trade("ETH", "0.000000000000000001")
        #expect(await eventually { rig.price("ETH") != nil && rig.price("BTC") != nil })
        #expect(rig.price("BTC")?.price == F.price("64250.12345678"))
        #expect(rig.price("ETH")?.price == F.price("0.000000000000000001"))
        #expect(rig.price("BTC")?.sources == 1)
        let stats = try #require(rig.stats(venue))
        #expect(stats.isConnected)
        #expect(stats.prices == 2)
        #expect(stats.lastError.isEmpty)
        #expect(stats.failedConnections == 0)
    }

    @Test func aVenueOverTLSIsVerifiedAgainstTheCAFile() async throws {
        let pki = try await TestCertificates.shared()
        let exchange = try await FakeExchange.start(
            venue: "coinbase", certificate: (pki.server.certificateFile, pki.server.privateKeyFile))
        #expect(exchange.url().hasPrefix("wss://127.0.0.1:"))
        let rig = try Rig("coinbase", exchanges: [exchange], caFile: pki.caFile)
        defer { rig.stop() }
        #expect(await Self.subscribed(exchange))
        exchange.trade("BTC", "64250.00000001")
        #expect(await eventually { rig.price("BTC")?.price == F.price("64250.00000001") })
        #expect(rig.stats("coinbase")?.isConnected == true)
        #expect(rig.stats("coinbase")?.lastError.isEmpty == true)
        // A drop over TLS reconnects (a new handshake) and resubscribes like one over TCP.
        exchange.send(["cmd": "drop"])
        #expect(await eventually { exchange.connections == 2 && exchange.messages.count == 2 })
        exchange.trade("BTC", "64251")
        #expect(await eventually { rig.price("BTC")?.price == F.price("64251") })
    }

    @Test func certificatesThatDoNotVerifyAreRefusedAndOtherSourcesGoOn() async throws {
        let pki = try await TestCertificates.shared()
        // Each venue presents a certificate that must not be taken: for another host, expired, from a CA that is
        // neither the system's nor in the CA file.
        let wrongHost = try await FakeExchange.start(
            venue: "binance", certificate: (pki.wrongHost.certificateFile, pki.wrongHost.privateKeyFile))
        let expired = try await FakeExchange.start(
            venue: "kraken", certificate: (pki.expiredServer.certificateFile, pki.expiredServer.privateKeyFile))
        let untrusted = try await FakeExchange.start(
            venue: "finnhub",
            certificate: (pki.untrustedServer.certificateFile, pki.untrustedServer.privateKeyFile))
        let healthy = try await FakeExchange.start(venue: "coinbase", certificate: (pki.server.certificateFile, pki.server.privateKeyFile))
        let rig = try Rig(
            "binance,kraken,finnhub,coinbase", exchanges: [wrongHost, expired, untrusted, healthy], symbols: ["BTC"],
            caFile: pki.caFile)
        defer { rig.stop() }
        let refused = ["binance": "mismatch", "kraken": "certificate has expired", "finnhub": "certificate was refused"]
        #expect(await eventually {
            refused.allSatisfy { venue, text in rig.stats(venue)?.lastError.contains(text) == true }
        }, "\(refused.keys.map { "\($0): \(rig.stats($0)?.lastError ?? "-")" })")
        for (venue, _) in refused {
            let stats = try #require(rig.stats(venue))
            #expect(!stats.isConnected, "\(venue)")
            #expect(stats.failedConnections >= 1, "\(venue)")
            #expect(stats.reconnects == 0, "\(venue)")
            #expect(stats.lastError.contains("TLS"), "\(venue): \(stats.lastError)")
        }
        // Nothing reached the fake exchanges' WebSocket handlers: no upgrade, no subscription.
        #expect(wrongHost.connections == 0 && expired.connections == 0 && untrusted.connections == 0)
        #expect(wrongHost.messages.isEmpty && expired.messages.isEmpty && untrusted.messages.isEmpty)
        #expect(await Self.subscribed(healthy))
        healthy.trade("BTC", "64000.5")
        #expect(await eventually { rig.price("BTC")?.price == F.price("64000.5") && rig.price("BTC")?.sources == 1 })
    }

    @Test func aCAFileThatIsNotPEMIsRefusedAtSetUp() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/ca.pem"
        try "not a certificate\n".write(toFile: file, atomically: true, encoding: .utf8)
        let hub = try PriceHub()
        defer { hub.close() }
        var configuration = FeedSet.Configuration()
        configuration.caFile = file
        configuration.urls["kraken"] = "wss://127.0.0.1:1/ws"
        #expect {
            _ = try FeedSet(spec: try FeedSpec(parsing: "kraken"), hub: hub, configuration: configuration)
        } throws: { error in
            (error as? FeedError)?.code == .tlsSetup
        }
        #expect(throws: FeedError.self) { try FeedSet.checkCAFile(file) }
    }

    @Test func anAbruptCloseReconnectsAndResubscribes() async throws {
        let exchange = try await FakeExchange.start(venue: "binance")
        let rig = try Rig("binance", exchanges: [exchange])
        defer { rig.stop() }
        #expect(await Self.subscribed(exchange))
        exchange.send(["cmd": "drop"])
        #expect(await eventually { exchange.messages.count == 2 && exchange.connections == 2 })
        #expect(Set(exchange.messages).count == 1)
        #expect(await eventually { rig.stats("binance")?.reconnects == 1 && rig.stats("binance")?.isConnected == true })
        exchange.trade("BTC", "1.5")
        #expect(await eventually { rig.price("BTC")?.price == F.price("1.5") })
    }

    @Test func aSilentVenueGoesStaleAndComesBack() async throws {
        let exchange = try await FakeExchange.start(venue: "kraken", options: ["--heartbeat", "0.2"])
        let rig = try Rig("kraken", exchanges: [exchange], maxAge: .seconds(1), deadline: .seconds(2))
        defer { rig.stop() }
        #expect(await Self.subscribed(exchange))
        exchange.trade("BTC", "64000")
        #expect(await eventually { rig.price("BTC")?.price == F.price("64000") })
        exchange.send(["cmd": "silence"])
        // No trade within the max age: stale; no message within the deadline: a new connection.
        #expect(await eventually { rig.price("BTC")?.isStale == true })
        #expect(await eventually { exchange.connections >= 2 })
        #expect(rig.stats("binance") == nil)
        exchange.send(["cmd": "resume"])
        #expect(await eventually { rig.stats("kraken")?.isConnected == true && exchange.messages.count >= 2 })
        // The trade is sent again while the test waits: with a max age of 1 s, a price the test reads late on a busy
        // machine may be stale already, however fast it arrived.
        #expect(await Self.resending({ exchange.trade("BTC", "64001") }) {
            rig.price("BTC").map { !$0.isStale && $0.price == F.price("64001") } == true
        })
        #expect(rig.stats("kraken")!.lastError.hasPrefix("no message for 2 s"))
    }

    @Test func faultsAreCountedAndOtherSourcesGoOn() async throws {
        let faulty = try await FakeExchange.start(venue: "binance")
        let healthy = try await FakeExchange.start(venue: "coinbase")
        let rig = try Rig("binance,coinbase", exchanges: [faulty, healthy], symbols: ["BTC"])
        defer { rig.stop() }
        #expect(await Self.subscribed(faulty))
        #expect(await Self.subscribed(healthy))
        func healthyTrade(_ price: String) async -> Bool {
            healthy.trade("BTC", price)
            return await eventually {
                rig.stats("coinbase")?.prices ?? 0 > 0 && rig.hub.latestPrice(of: F.symbol("BTC")) != nil
                    && healthy.done("trade") > 0
            }
        }

        // Messages that are counted and skipped: the connection stays.
        faulty.trade("BTC", "100")
        faulty.send(["cmd": "raw", "text": "{not json"])
        faulty.send(["cmd": "raw", "text": #"{"stream":"x","data":{"e":"kline"}}"#])
        faulty.send(["cmd": "gap", "symbol": "BTC", "skip": 3])
        faulty.trade("BTC", "101")
        faulty.send(["cmd": "duplicate", "symbol": "BTC"])
        #expect(await eventually {
            let stats = rig.stats("binance")
            return stats?.malformed == 1 && stats?.unknown == 1 && stats?.gaps == 1 && stats?.duplicates == 1
        })
        #expect(rig.stats("binance")?.reconnects == 0)
        #expect(await healthyTrade("99"))

        // Frames that recycle the connection, each followed by a reconnect and a resubscription.
        var connections = 1
        for command in ["binary", "bad-close", "oversize"] {
            var payload: [String: any Sendable] = ["cmd": command]
            if command == "oversize" { payload["bytes"] = 2 << 20 }
            faulty.send(payload)
            connections += 1
            let expected = connections
            #expect(await eventually { faulty.connections == expected && faulty.messages.count == expected },
                    "\(command)")
            #expect(await healthyTrade("9\(connections)"), "\(command)")
        }
        let closeCodes = faulty.events.filter { $0["event"] as? String == "closed" }.compactMap { $0["code"] as? Int }
        #expect(closeCodes == [1003, 1002, 1009])
        #expect(rig.stats("binance")?.reconnects == 3)
        #expect(rig.stats("coinbase")?.reconnects == 0)
    }

    @Test func aWrongAcceptOrARateLimitIsRefused() async throws {
        let forged = try await FakeExchange.start(venue: "binance", options: ["--bad-accept"])
        let limited = try await FakeExchange.start(venue: "kraken", options: ["--reject", "429"])
        let rig = try Rig("binance,kraken", exchanges: [forged, limited])
        defer { rig.stop() }
        // The rate limit is counted a moment before the error is recorded: wait for both.
        #expect(await eventually {
            rig.stats("binance")?.lastError.contains("Sec-WebSocket-Accept") == true
                && rig.stats("kraken")?.rateLimits ?? 0 >= 1 && rig.stats("kraken")?.lastError.contains("429") == true
        })
        #expect(forged.messages.isEmpty)
        #expect(rig.stats("binance")?.isConnected == false)
        #expect(rig.stats("kraken")?.isConnected == false)
        #expect(limited.messages.isEmpty)
        // How long each waits is VenueSourceTests' business (a manual clock); here: refused, counted, nothing taken.
        #expect(rig.hub.knownSymbols.isEmpty)
    }

    @Test func threeVenuesGiveTheMedianAndOneStaleVenueLeavesTheRest() async throws {
        let binance = try await FakeExchange.start(venue: "binance")
        let coinbase = try await FakeExchange.start(venue: "coinbase")
        let kraken = try await FakeExchange.start(venue: "kraken")
        let rig = try Rig(
            "binance,coinbase,kraken", exchanges: [binance, coinbase, kraken], symbols: ["BTC"], maxAge: .seconds(3))
        defer { rig.stop() }
        for exchange in [binance, coinbase, kraken] {
            #expect(await Self.subscribed(exchange))
        }
        // All three quote until all three count at once: on a busy machine one venue's trade may arrive after
        // another's has aged out, so each round refreshes them all.
        #expect(await Self.resending({
            binance.trade("BTC", "64250")
            coinbase.trade("BTC", "64260")
            kraken.trade("BTC", "99999")   // an outlier
        }) { rig.price("BTC")?.sources == 3 })
        #expect(rig.price("BTC")?.price == F.price("64260"))
        // Kraken stops quoting; the others go on: after the max age the median is theirs alone.
        #expect(await Self.resending({
            binance.trade("BTC", "64250")
            coinbase.trade("BTC", "64270")
        }) { rig.price("BTC")?.sources == 2 })
        #expect(rig.price("BTC")?.price == F.price("64260"))
        #expect(rig.price("BTC")?.isStale == false)
    }
}
