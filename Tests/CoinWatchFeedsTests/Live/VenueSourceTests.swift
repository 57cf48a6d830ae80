import CoinWatchLogging
import CoinWatchModel
import CoinWatchService
import Testing
@testable import CoinWatchFeeds

/// A venue connection's life on a manual clock and an in-memory transport: subscribe, trades, liveness, every
/// fault, reconnects with backoff and resubscription.
struct VenueSourceTests {
    typealias S = ServerFrames
    typealias F = PriceFixtures

    /// A source under test with everything it talks to.
    final class Rig {
        let scheduler = ManualScheduler()
        let dialer = FakeDialer()
        let sink = RecordingSink()
        let stats: SourceStatsRecorder
        let source: VenueSource

        init(
            adapter: any VenueAdapter = BinanceVenue(), symbols: [String] = ["BTC", "ETH"],
            liveness: VenueLiveness = VenueLiveness(deadline: .seconds(30), pingAfter: .seconds(10)),
            maxMessageBytes: Int = 64 * 1024, random: @escaping @Sendable (Int64) -> Int64 = { $0 }
        ) throws {
            stats = SourceStatsRecorder(name: adapter.name, clock: scheduler.manual)
            var configuration = VenueSource.Configuration(
                url: try WebSocketURL(parsing: "ws://127.0.0.1:9/stream"),
                instruments: symbols.map { (adapter.defaultInstrument($0), F.symbol($0)) }, liveness: liveness)
            configuration.maxMessageBytes = maxMessageBytes
            source = VenueSource(
                adapter: adapter, configuration: configuration, symbolMap: SymbolMap(), sink: sink, stats: stats,
                scheduler: scheduler, dialer: dialer, sha1: S.fakeDigest, logger: .disabled, random: random)
        }

        var transport: FakeTransport { dialer.current! }

        /// Starts (or waits out a backoff) and completes the upgrade.
        func connect() {
            if dialer.transports.isEmpty { source.start() }
            transport.upgrade()
        }

        func send(_ text: String) {
            transport.deliver(S.text(text))
        }
    }

    static func trade(_ symbol: String, _ price: String, id: Int, time: Int64 = 1_718_000_000_000) -> String {
        "{\"stream\":\"\(symbol.lowercased())@trade\",\"data\":{\"e\":\"trade\",\"E\":\(time),\"s\":\"\(symbol)\","
            + "\"t\":\(id),\"p\":\"\(price)\",\"q\":\"1\",\"T\":\(time)}}"
    }

    @Test func subscribesAfterTheUpgradeAndPublishesExactPricesPerRead() throws {
        let rig = try Rig()
        rig.source.start()
        #expect(rig.transport.request?.hasPrefix("GET /stream HTTP/1.1\r\nHost: 127.0.0.1:9\r\n") == true)
        #expect(rig.transport.texts.isEmpty)
        rig.transport.upgrade()
        #expect(rig.transport.texts == [#"{"method":"SUBSCRIBE","params":["btcusdt@trade","ethusdt@trade"],"id":1}"#])
        #expect(rig.stats.snapshot.isConnected)
        // Two trades in one read are one batch.
        rig.transport.deliver(S.text(Self.trade("BTCUSDT", "64250.50000000", id: 1))
            + S.text(Self.trade("ETHUSDT", "3450.25", id: 7)))
        rig.send(Self.trade("BTCUSDT", "0.000000000000000001", id: 2))
        #expect(rig.sink.batches.map(\.count) == [2, 1])
        #expect(rig.sink.prices == ["BTC 64250.5", "ETH 3450.25", "BTC 0.000000000000000001"])
        #expect(rig.sink.ticks.first?.timeMs == 1_718_000_000_000)
        let stats = rig.stats.snapshot
        #expect(stats.messages == 3)
        #expect(stats.prices == 3)
        #expect(stats.lastMessageAgeMs == 0)
        #expect(stats.reconnects == 0)
    }

    /// Over TLS the loop hands a source one record at a time, several per readiness: the prices of all of them go
    /// to the sink in one batch, when the transport says the readiness is over (each batch wakes the alert thread).
    @Test func theReadsOfOneReadinessArePublishedOnceAtItsEnd() throws {
        let rig = try Rig()
        rig.connect()
        func read(_ bytes: [UInt8]) { bytes.withUnsafeBytes { rig.source.transport(rig.transport, received: $0) } }
        let split = S.text(Self.trade("ETHUSDT", "4", id: 2))
        read(S.text(Self.trade("BTCUSDT", "1", id: 1)) + S.text(Self.trade("ETHUSDT", "2", id: 1)))
        read(S.text(Self.trade("BTCUSDT", "3", id: 2)) + split.prefix(20))
        read(Array(split.dropFirst(20)))
        #expect(rig.sink.batches.isEmpty)
        #expect(rig.stats.snapshot.messages == 0)
        rig.source.transportReadFinished(rig.transport)
        #expect(rig.sink.batches.map(\.count) == [4])
        #expect(rig.sink.prices == ["BTC 1", "ETH 2", "BTC 3", "ETH 4"])
        #expect(rig.stats.snapshot.messages == 4)
        // The next readiness is a batch of its own.
        rig.transport.deliver(reads: [S.text(Self.trade("BTCUSDT", "5", id: 3)), S.text(Self.trade("BTCUSDT", "6", id: 4))])
        #expect(rig.sink.batches.map(\.count) == [4, 2])
    }

    /// Under a flood one readiness brings thousands of trades; a batch that reaches the limit goes at once, so the
    /// first trades do not wait for the whole readiness to be read.
    @Test func aReadinessPastTheBatchLimitPublishesEarly() throws {
        let rig = try Rig()
        rig.connect()
        var id = 0
        func read(_ trades: Int) {
            var bytes: [UInt8] = []
            for _ in 0..<trades {
                id += 1
                bytes += S.text(Self.trade("BTCUSDT", "\(id)", id: id))
            }
            bytes.withUnsafeBytes { rig.source.transport(rig.transport, received: $0) }
        }
        let perRead = 100
        let readsUnder = (VenueSource.publishBatchLimit - 1) / perRead
        for _ in 0..<readsUnder { read(perRead) }
        #expect(rig.sink.batches.isEmpty)
        read(perRead)
        #expect(rig.sink.batches.map(\.count) == [(readsUnder + 1) * perRead])
        read(perRead)
        rig.source.transportReadFinished(rig.transport)
        #expect(rig.sink.batches.map(\.count) == [(readsUnder + 1) * perRead, perRead])
        #expect(rig.sink.prices.last == "BTC \(id)")
    }

    /// Prices read before the connection ends or the source stops, in the same readiness, are published then,
    /// not dropped and not held for a later connection.
    @Test func pricesReadBeforeAnEndingArePublished() throws {
        for ending in ["close frame", "reset", "stop"] {
            let rig = try Rig()
            rig.connect()
            S.text(Self.trade("BTCUSDT", "7", id: 1)).withUnsafeBytes { rig.source.transport(rig.transport, received: $0) }
            #expect(rig.sink.batches.isEmpty, "\(ending)")
            switch ending {
            case "close frame":
                S.close(1001, "bye").withUnsafeBytes { rig.source.transport(rig.transport, received: $0) }
            case "reset": rig.transport.reset()
            default: rig.source.stop {}
            }
            #expect(rig.sink.prices == ["BTC 7"], "\(ending)")
            // A readiness end that comes after changes nothing.
            rig.source.transportReadFinished(rig.transport)
            #expect(rig.sink.prices == ["BTC 7"], "\(ending)")
        }
    }

    @Test func anAbruptCloseReconnectsAfterBackoffAndResubscribes() throws {
        let rig = try Rig()
        rig.connect()
        rig.send(Self.trade("BTCUSDT", "1", id: 1))
        rig.transport.reset()
        #expect(!rig.stats.snapshot.isConnected)
        #expect(rig.stats.snapshot.lastError.contains("connection reset by peer"))
        #expect(rig.stats.snapshot.failedConnections == 0, "it had opened")
        #expect(rig.dialer.transports.count == 1)
        // The first failure after data waits up to 1 s (the injected draw takes the ceiling).
        rig.scheduler.advance(.milliseconds(999))
        #expect(rig.dialer.transports.count == 1)
        rig.scheduler.advance(.milliseconds(1))
        #expect(rig.dialer.transports.count == 2)
        rig.transport.upgrade()
        #expect(rig.transport.texts.count == 1)
        #expect(rig.stats.snapshot.reconnects == 1)
        #expect(rig.stats.snapshot.isConnected)
        // A failure without data in between doubles the wait.
        rig.transport.reset()
        rig.scheduler.advance(.milliseconds(1999))
        #expect(rig.dialer.transports.count == 2)
        rig.scheduler.advance(.milliseconds(1))
        #expect(rig.dialer.transports.count == 3)
        // Refused connections keep doubling up to the cap.
        var waits: [Int64] = []
        for _ in 0..<8 {
            rig.dialer.nextFailure = FeedDialError(kind: .connect, message: "refused")
            rig.transport.reset()
            let before = rig.dialer.dialedURLs.count
            let wait = rig.scheduler.nextDue ?? -1
            waits.append(wait / 1_000_000_000)
            rig.scheduler.advance(.nanoseconds(wait))
            #expect(rig.dialer.dialedURLs.count == before + 1)
        }
        #expect(waits.last == 60)
    }

    @Test func aQuietConnectionIsPingedAndASilentOneReplaced() throws {
        let rig = try Rig(liveness: VenueLiveness(deadline: .seconds(30), pingAfter: .seconds(10)))
        rig.connect()
        rig.scheduler.advance(.seconds(10))
        #expect(rig.transport.clientFrames.filter { $0.opcode == 9 }.count == 1)
        // The pong keeps it alive past the deadline.
        rig.transport.deliver(S.frame(0xA, Array("coinwatch".utf8)))
        rig.scheduler.advance(.seconds(25))
        #expect(rig.dialer.transports.count == 1)
        #expect(!rig.transport.closed)
        // Since the pong (at 10 s) nothing at all: a second ping went out, and 30 s after the pong it is replaced.
        #expect(rig.transport.clientFrames.filter { $0.opcode == 9 }.count == 2)
        rig.scheduler.advance(.seconds(4))
        #expect(!rig.transport.closed)
        rig.scheduler.advance(.seconds(1))
        #expect(rig.dialer.transports.first!.closed)
        #expect(rig.dialer.transports.first!.closedAfterFlush == false)
        #expect(rig.stats.snapshot.lastError == "no message for 30 s")
        rig.scheduler.advance(.seconds(1))
        #expect(rig.dialer.transports.count == 2)
    }

    @Test func venueHeartbeatsCountAsLife() throws {
        let rig = try Rig(adapter: KrakenVenue(), liveness: VenueLiveness(deadline: .seconds(10), pingAfter: .seconds(5)))
        rig.connect()
        for _ in 0..<30 {
            rig.scheduler.advance(.seconds(1))
            rig.send(#"{"channel":"heartbeat"}"#)
        }
        #expect(rig.dialer.transports.count == 1)
        #expect(rig.transport.clientFrames.filter { $0.opcode == 9 }.isEmpty)
        #expect(rig.stats.snapshot.messages == 30)
    }

    @Test func gapsAreCountedAndDuplicatesAndOldTradesDropped() throws {
        let rig = try Rig()
        rig.connect()
        for id in [1, 2, 5, 5, 3, 6] {
            rig.send(Self.trade("BTCUSDT", "\(id)", id: id))
        }
        #expect(rig.sink.prices == ["BTC 1", "BTC 2", "BTC 5", "BTC 6"])
        let stats = rig.stats.snapshot
        #expect(stats.gaps == 1)
        #expect(stats.missedMessages == 2)
        #expect(stats.duplicates == 1)
        #expect(stats.outOfOrder == 1)
        #expect(stats.rejectedMessages == 2)
    }

    @Test func coinbaseHeartbeatsRevealMissingMatches() throws {
        let rig = try Rig(adapter: CoinbaseVenue())
        rig.connect()
        #expect(rig.transport.texts == [#"{"type":"subscribe","product_ids":["BTC-USD","ETH-USD"],"channels":["matches","heartbeat"]}"#])
        rig.send(#"{"type":"match","trade_id":10,"product_id":"BTC-USD","price":"64250.5","time":"2024-06-10T00:00:00Z"}"#)
        rig.send(#"{"type":"heartbeat","last_trade_id":12,"product_id":"BTC-USD","sequence":1,"time":"2024-06-10T00:00:01Z"}"#)
        #expect(rig.stats.snapshot.gaps == 1)
        #expect(rig.stats.snapshot.missedMessages == 2)
        rig.send(#"{"type":"match","trade_id":13,"product_id":"BTC-USD","price":"64251","time":"2024-06-10T00:00:02Z"}"#)
        #expect(rig.stats.snapshot.gaps == 1)
        #expect(rig.sink.prices == ["BTC 64250.5", "BTC 64251"])
        #expect(rig.sink.ticks.map(\.timeMs) == [1_717_977_600_000, 1_717_977_602_000])
    }

    @Test func malformedUnknownAndUnmappedMessagesAreCountedAndTheConnectionStays() throws {
        let rig = try Rig()
        rig.connect()
        rig.send("{not json")
        rig.send(#"{"stream":"x","data":{"e":"kline"}}"#)
        rig.send(#"{"stream":"btceur@trade","data":{"e":"trade","s":"BTCEUR","t":1,"p":"60000","T":1}}"#)
        rig.send(#"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","t":1,"p":"-5","T":1}}"#)
        rig.send(Self.trade("BTCUSDT", "64250", id: 2))
        let stats = rig.stats.snapshot
        #expect(stats.malformed == 2)
        #expect(stats.unknown == 1)
        #expect(stats.unmapped == 1)
        #expect(!rig.transport.closed)
        #expect(rig.sink.prices == ["BTC 64250"])
    }

    @Test func frameFaultsCloseWithTheirCodeAndReconnect() throws {
        let cases: [(String, [UInt8], UInt16)] = [
            ("binary", S.frame(0x2, [1, 2, 3]), 1003),
            ("oversized", S.frame(0x1, Array(repeating: 0x20, count: 70_000)), 1009),
            ("bad close code", S.close(1005), 1002),
            ("masked", S.frame(0x1, Array("{}".utf8), mask: 1), 1002),
            ("not UTF-8", S.frame(0x1, [0xFF]), 1007),
        ]
        // Finnhub's trades are taken where they stand when nothing comes before them in a read
        // (`readUsualTrades`); after a fault in the same read they must not be taken either way.
        let trades: [(any VenueAdapter, String)] = [
            (BinanceVenue(), Self.trade("BTCUSDT", "1", id: 1)),
            (FinnhubVenue(), #"{"type":"trade","data":[{"p":1,"s":"BINANCE:BTCUSDT","t":1718000000000,"v":0.01}]}"#),
        ]
        for (name, bytes, code) in cases {
            for (adapter, trade) in trades {
                let name = "\(name), \(adapter.name)"
                let rig = try Rig(adapter: adapter)
                rig.connect()
                rig.transport.deliver(bytes + S.text(trade))
                #expect(rig.transport.closed, "\(name)")
                let close = rig.transport.clientFrames.last
                #expect(close?.opcode == 8, "\(name)")
                #expect(close?.payload.prefix(2) == [UInt8(code >> 8), UInt8(code & 0xFF)][...], "\(name)")
                #expect(rig.sink.ticks.isEmpty, "\(name)")
                rig.scheduler.advance(.seconds(2))
                #expect(rig.dialer.transports.count == 2, "\(name)")
                // The same trade on its own, on the new connection, is taken.
                rig.transport.upgrade()
                rig.transport.deliver(S.text(trade))
                #expect(rig.sink.prices == ["BTC 1"], "\(name)")
            }
        }
    }

    @Test func theVenuesCloseIsEchoedAndFollowedByAReconnect() throws {
        let rig = try Rig()
        rig.connect()
        rig.transport.deliver(S.close(1001, "restarting"))
        #expect(rig.transport.clientFrames.last == .init(opcode: 8, payload: [0x03, 0xE9]))
        #expect(rig.transport.closed)
        #expect(rig.stats.snapshot.lastError == "the venue closed the connection (1001: restarting)")
        rig.scheduler.advance(.seconds(1))
        #expect(rig.dialer.transports.count == 2)
    }

    @Test func aWrongAcceptIsRefusedAndBacksOffLikeAnError() throws {
        let rig = try Rig()
        rig.source.start()
        rig.transport.deliver(Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaK9kxb3ETSpb8BnAI=\r\n\r\n").utf8))
        #expect(rig.transport.closed)
        #expect(rig.transport.clientFrames.isEmpty)
        #expect(rig.stats.snapshot.lastError.hasPrefix("upgrade refused: Sec-WebSocket-Accept"))
        #expect(rig.stats.snapshot.failedConnections == 1)
        #expect(!rig.stats.snapshot.isConnected)
        #expect(rig.scheduler.nextDue == 5_000_000_000)
    }

    @Test func aRateLimitedUpgradeWaitsItsRetryAfter() throws {
        let rig = try Rig(random: { _ in 0 })
        rig.source.start()
        rig.transport.deliver(Array("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 90\r\n\r\n".utf8))
        #expect(rig.stats.snapshot.rateLimits == 1)
        #expect(rig.scheduler.nextDue == 90_000_000_000)
        rig.scheduler.advance(.seconds(89))
        #expect(rig.dialer.transports.count == 1)
        rig.scheduler.advance(.seconds(1))
        #expect(rig.dialer.transports.count == 2)
    }

    @Test func anErrorEventClosesAndBacksOffLonger() throws {
        let rig = try Rig(random: { _ in 0 })
        rig.connect()
        rig.send(#"{"error":{"code":-1003,"msg":"Too many requests"},"id":1}"#)
        #expect(rig.transport.clientFrames.last?.opcode == 8)
        #expect(rig.transport.closedAfterFlush == true)
        #expect(rig.stats.snapshot.venueErrors == 1)
        #expect(rig.stats.snapshot.rateLimits == 1)
        #expect(rig.scheduler.nextDue == 30_000_000_000)
        let other = try Rig(adapter: CoinbaseVenue(), random: { _ in 0 })
        other.connect()
        other.send(#"{"type":"error","message":"Failed to subscribe","reason":"BTC-XYZ is not a valid product"}"#)
        #expect(other.scheduler.nextDue == 5_000_000_000)
    }

    @Test func anUpgradeThatNeverComesTimesOut() throws {
        let rig = try Rig()
        rig.source.start()
        rig.scheduler.advance(.seconds(15))
        #expect(rig.transport.closed)
        #expect(rig.stats.snapshot.lastError == "no WebSocket upgrade within 15 s")
        rig.dialer.holdDials = true
        rig.scheduler.advance(.seconds(1))
        #expect(rig.dialer.dialedURLs.count == 2)
        rig.scheduler.advance(.seconds(15))
        #expect(rig.stats.snapshot.lastError == "no WebSocket upgrade within 15 s")
        #expect(rig.stats.snapshot.failedConnections == 2)
        #expect(rig.scheduler.pendingCount == 1)
    }

    @Test func stoppingSendsGoingAwayAndNeverReconnects() throws {
        let rig = try Rig()
        rig.connect()
        var stopped = false
        rig.source.stop { stopped = true }
        #expect(rig.transport.clientFrames.last == .init(opcode: 8, payload: [0x03, 0xE9] + Array("shutting down".utf8)))
        #expect(rig.transport.closedAfterFlush == true)
        #expect(stopped)
        rig.scheduler.advance(.seconds(120))
        #expect(rig.dialer.transports.count == 1)
        #expect(!rig.stats.snapshot.isConnected)
    }

    @Test func finnhubsTokenIsInTheURLButNotInTheStats() throws {
        let rig = try Rig(adapter: FinnhubVenue(token: "sekret"), symbols: ["BTC"])
        rig.connect()
        #expect(rig.transport.request?.hasPrefix("GET /stream?token=sekret HTTP/1.1") == true)
        #expect(rig.transport.texts == [#"{"type":"subscribe","symbol":"BINANCE:BTCUSDT"}"#])
        rig.send(#"{"type":"trade","data":[{"p":64250.5,"s":"BINANCE:BTCUSDT","t":1718000000000,"v":0.1}]}"#)
        #expect(rig.sink.prices == ["BTC 64250.5"])
        rig.transport.reset()
        #expect(!rig.stats.snapshot.lastError.contains("sekret"))
    }
}
