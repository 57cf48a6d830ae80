import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Foundation
import Testing
import CoinWatchService
@testable import CoinWatchFeeds

/// Replaying the shipped samples into a hub, and the feed's lifecycle.
@Suite(.timeLimit(.minutes(3)))
struct ReplayFeedTests {
    typealias F = PriceFixtures

    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("samples")

    /// The last price per symbol of the CSV sample, read with a plain split (independently of the parser).
    static func lastCSVPrices() throws -> [String: ExactDecimal] {
        let text = try String(contentsOf: samples.appendingPathComponent("trades.csv"), encoding: .utf8)
        var last: [String: ExactDecimal] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",")
            last[String(fields[1])] = ExactDecimal(String(fields[2]))!
        }
        return last
    }

    /// The last price per symbol of the JSON-lines sample, found with a pattern over the trade objects.
    static func lastJSONPrices() throws -> (prices: [String: ExactDecimal], trades: Int) {
        let text = try String(contentsOf: samples.appendingPathComponent("trades.jsonl"), encoding: .utf8)
        let object = try NSRegularExpression(pattern: #"\{[^{}]*"s":"(?:BINANCE:)?([A-Z]+)USDT"[^{}]*\}"#)
        let price = try NSRegularExpression(pattern: #""p":"?([0-9.]+)"?"#)
        var last: [String: ExactDecimal] = [:]
        var trades = 0
        let whole = NSRange(text.startIndex..., in: text)
        for match in object.matches(in: text, range: whole) {
            let body = String(text[Range(match.range, in: text)!])
            let symbol = String(text[Range(match.range(at: 1), in: text)!])
            let found = try #require(price.firstMatch(in: body, range: NSRange(body.startIndex..., in: body)))
            last[symbol] = ExactDecimal(String(body[Range(found.range(at: 1), in: body)!]))!
            trades += 1
        }
        return (last, trades)
    }

    /// The last price per symbol of a venue's sample (Coinbase's `"product_id":"BTC-USD"…"price":"…"`, Kraken's
    /// `"symbol":"BTC/USD"…"price":…`), found with a pattern, independently of the adapters.
    static func lastVenuePrices(_ file: String) throws -> (prices: [String: ExactDecimal], trades: Int) {
        let text = try String(contentsOf: samples.appendingPathComponent(file), encoding: .utf8)
        let trade = try NSRegularExpression(
            pattern: #"\{[^{}]*"(?:product_id|symbol)":"([A-Z]+)[-/]USD"[^{}]*"price":"?([0-9.]+)"?[^{}]*\}|\{[^{}]*"price":"?([0-9.]+)"?[^{}]*"(?:product_id|symbol)":"([A-Z]+)[-/]USD"[^{}]*\}"#)
        var last: [String: ExactDecimal] = [:]
        var trades = 0
        for match in trade.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let pick = { (index: Int) -> String? in Range(match.range(at: index), in: text).map { String(text[$0]) } }
            guard let symbol = pick(1) ?? pick(4), let price = pick(2) ?? pick(3) else { continue }
            last[symbol] = ExactDecimal(price)!
            trades += 1
        }
        return (last, trades)
    }

    @Test(arguments: ["coinbase.jsonl", "kraken.jsonl"])
    func venueSamplesReplayEveryTradeExactly(_ file: String) throws {
        let recording = try ReplayRecording.load(path: Self.samples.appendingPathComponent(file).path)
        #expect(recording.format == .jsonLines)
        #expect(recording.skippedLines == 0)
        #expect(recording.warnings.isEmpty)
        let expected = try Self.lastVenuePrices(file)
        #expect(expected.trades == 300)
        #expect(recording.events.count == expected.trades)
        #expect(recording.symbols.map(\.rawValue) == ["BTC", "ETH", "SOL"])
        var last: [String: ExactDecimal] = [:]
        for event in recording.events { last[event.symbol.rawValue] = event.price }
        #expect(last == expected.prices)
        #expect(recording.events.map(\.timeMs) == recording.events.map(\.timeMs).sorted())
    }

    static func prices(_ hub: PriceHub) -> [String: ExactDecimal] {
        Dictionary(uniqueKeysWithValues: hub.latestPrices().map { ($0.symbol.rawValue, $0.price) })
    }

    @Test func csvSampleAtFullSpeedLeavesTheFilesLastPrices() throws {
        let hub = try PriceHub()
        let feed = try ReplayFeed(
            publishingTo: hub, path: Self.samples.appendingPathComponent("trades.csv").path, options: .init(speed: 0))
        #expect(feed.recording.format == .csv)
        #expect(feed.recording.skippedLines == 0)
        #expect(feed.recording.events.count >= 300)
        #expect(feed.symbols.map(\.rawValue) == ["BTC", "ETH", "SOL"])
        feed.start()
        #expect(feed.waitUntilFinished(timeout: .seconds(30)))
        #expect(feed.publishedTicks == feed.recording.events.count)
        #expect(feed.completedPasses == 1)
        #expect(Self.prices(hub) == (try Self.lastCSVPrices()))
        feed.stop()
        hub.close()
    }

    @Test func jsonLinesSampleAtFullSpeedLeavesTheFilesLastPrices() throws {
        let hub = try PriceHub()
        let feed = try ReplayFeed(
            publishingTo: hub, path: Self.samples.appendingPathComponent("trades.jsonl").path, options: .init(speed: 0))
        let expected = try Self.lastJSONPrices()
        #expect(feed.recording.format == .jsonLines)
        #expect(feed.recording.skippedLines == 0)
        #expect(feed.recording.events.count == expected.trades)
        feed.start()
        #expect(feed.waitUntilFinished(timeout: .seconds(30)))
        #expect(Self.prices(hub) == expected.prices)
        hub.close()
    }

    @Test func pacedReplayReachesTheSameEnd() throws {
        // About 200 s of recorded trades at 2000× take a tenth of a second, exercising the paced path.
        let hub = try PriceHub()
        let feed = try ReplayFeed(
            publishingTo: hub, path: Self.samples.appendingPathComponent("trades.csv").path, options: .init(speed: 2_000))
        feed.start()
        #expect(feed.waitUntilFinished(timeout: .seconds(30)))
        #expect(Self.prices(hub) == (try Self.lastCSVPrices()))
        hub.close()
    }

    @Test func loopingReplayRunsUntilStoppedAndKeepsRecordedTimesOnRequest() async throws {
        let hub = try PriceHub()
        let recording = ReplayRecording(parsing: "timestamp,symbol,price\n1000,BTC,1\n1001,BTC,2\n1002,ETH,3\n")
        var options = ReplayFeed.Options(speed: 0, loop: true)
        options.restampTimes = false
        let feed = try ReplayFeed(publishingTo: hub, recording: recording, options: options)
        feed.start()
        #expect(await eventually { feed.completedPasses >= 3 })
        #expect(!feed.waitUntilFinished(timeout: .milliseconds(1)))
        feed.stop()
        #expect(feed.waitUntilFinished(timeout: .seconds(1)))
        #expect(hub.latestPrice(of: F.symbol("ETH"))?.timeMs == 1002)
        #expect(feed.name.hasSuffix("as fast as possible, looping"))
        hub.close()
    }

    @Test func stoppingASlowReplayReturnsPromptly() throws {
        let hub = try PriceHub()
        // One trade now and the next an hour later at recorded speed: stop must cut the wait short.
        let recording = ReplayRecording(parsing: "timestamp,symbol,price\n0,BTC,1\n3600000,BTC,2\n")
        let feed = try ReplayFeed(publishingTo: hub, recording: recording)
        feed.start()
        #expect(eventuallySync { hub.latestPrice(of: F.symbol("BTC")) != nil })
        feed.stop()
        #expect(feed.waitUntilFinished(timeout: .seconds(1)))
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.price == F.price("1"))
        #expect(feed.publishedTicks == 1)
        hub.close()
    }

    @Test func fileWithoutUsableTradesIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "replay")
        let path = directory.appending("bad.csv").path
        try "timestamp,symbol,price\n1,BTC,zero\n".write(toFile: path, atomically: true, encoding: .utf8)
        let hub = try PriceHub()
        #expect {
            _ = try ReplayFeed(publishingTo: hub, path: path)
        } throws: { error in
            guard let error = error as? FeedError else { return false }
            return error.code == .empty && error.message.contains("holds no usable trade")
                && error.message.contains("line 2: price 'zero' is not a decimal number")
        }
        hub.close()
    }
}
