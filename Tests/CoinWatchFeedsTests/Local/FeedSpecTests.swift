import CoinWatchModel
import Testing
import CoinWatchService
@testable import CoinWatchFeeds

struct FeedSpecTests {
    @Test func parsesEveryForm() throws {
        #expect(try FeedSpec(parsing: "none") == .none)
        #expect(try FeedSpec(parsing: "sim") == .simulated(SimulatedFeed.Configuration()))
        #expect(try FeedSpec(parsing: "sim:42") == .simulated(SimulatedFeed.Configuration(seed: 42)))
        #expect(try FeedSpec(parsing: "sim@50") == .simulated(SimulatedFeed.Configuration(ticksPerSecond: 50)))
        #expect(try FeedSpec(parsing: " sim:7@2.5 ") == .simulated(
            SimulatedFeed.Configuration(seed: 7, ticksPerSecond: 2.5)))
        #expect(try FeedSpec(parsing: "replay:samples/trades.csv") == .replay(
            path: "samples/trades.csv", options: ReplayFeed.Options()))
        #expect(try FeedSpec(parsing: "replay:a.csv@10") == .replay(
            path: "a.csv", options: ReplayFeed.Options(speed: 10)))
        #expect(try FeedSpec(parsing: "replay:a.csv@10x") == .replay(
            path: "a.csv", options: ReplayFeed.Options(speed: 10)))
        #expect(try FeedSpec(parsing: "replay:a.csv@max") == .replay(
            path: "a.csv", options: ReplayFeed.Options(speed: 0)))
        #expect(try FeedSpec(parsing: "replay:a.csv@0,loop") == .replay(
            path: "a.csv", options: ReplayFeed.Options(speed: 0, loop: true)))
        #expect(try FeedSpec(parsing: "replay:a.csv@loop") == .replay(
            path: "a.csv", options: ReplayFeed.Options(speed: 1, loop: true)))
        #expect(try FeedSpec(parsing: "replay:/data/me@host/a.csv@2") == .replay(
            path: "/data/me@host/a.csv", options: ReplayFeed.Options(speed: 2)))
    }

    @Test func listsCombineSourcesInOrder() throws {
        #expect(try FeedSpec(parsing: "binance,coinbase,kraken").sources == [.binance, .coinbase(.matches), .kraken(.trade)])
        #expect(try FeedSpec(parsing: " kraken:ticker , coinbase:ticker,finnhub ").sources
            == [.kraken(.ticker), .coinbase(.ticker), .finnhub])
        #expect(try FeedSpec(parsing: "replay:a.csv@0,loop,binance,sim:2").sources == [
            .replay(path: "a.csv", options: ReplayFeed.Options(speed: 0, loop: true)), .binance,
            .simulated(SimulatedFeed.Configuration(seed: 2)),
        ])
        #expect(try FeedSpec(parsing: "binance,coinbase").description == "binance,coinbase")
        #expect(try FeedSpec(parsing: "none").description == "none")
        #expect(try FeedSpec(parsing: "kraken,sim").hasVenues)
        #expect(try !FeedSpec(parsing: "sim").hasVenues)
    }

    static let invalid: [(String, String)] = [
        ("", "feed '': empty"),
        ("simulated", "feed 'simulated': unknown feed"),
        ("sim:x", "the seed after 'sim:' must be a whole number"),
        ("sim:-1", "the seed after 'sim:' must be a whole number"),
        ("sim@0", "the rate after '@' must be ticks per second per symbol"),
        ("sim@fast", "the rate after '@' must be ticks per second per symbol"),
        ("simx", "unknown feed"),
        ("replay:", "the replay file is missing"),
        ("replay:@2", "the replay file is missing"),
        ("replay:a.csv@-1", "the speed after '@' must be a number ≥ 0"),
        ("replay:a.csv@inf", "the speed after '@' must be a number ≥ 0"),
        ("replay:a.csv@fast,loop", "the speed after '@' must be a number ≥ 0"),
        ("binance,binance", "binance is already in the list"),
        ("sim,none", "'none' cannot be combined"),
        ("binance,", "feed '': empty"),
        ("kraken:book", "unknown channel for kraken"),
        ("replay:a.csv,loop,loop", "'loop' given twice"),
        ("loop", "unknown feed"),
        ("bitstamp", "unknown feed"),
    ]

    @Test(arguments: 0..<19)
    func refusesBadTextWithTheSyntax(_ index: Int) {
        let (text, reason) = Self.invalid[index]
        #expect {
            _ = try FeedSpec(parsing: text)
        } throws: { error in
            guard let error = error as? FeedError else { return false }
            return error.code == .invalidSpec && error.message.contains(reason)
                && error.message.hasSuffix("expected \(FeedSpec.syntax)")
        }
    }

    @Test func makesTheFeedItNames() throws {
        let hub = try PriceHub()
        #expect(try FeedSpec(parsing: "none").makeFeed(hub: hub) is NoFeed)
        let sim = try FeedSpec(parsing: "sim:3@20").makeFeed(hub: hub)
        #expect(sim.symbols.map(\.rawValue) == ["BTC", "ETH", "SOL", "XRP", "DOGE", "ADA", "LTC", "AVAX"])
        #expect(sim.name == "sim seed 3, 20.0 ticks/s per symbol")
        #expect {
            _ = try FeedSpec(parsing: "replay:/nonexistent/trades.csv").makeFeed(hub: hub)
        } throws: { error in
            (error as? FeedError)?.code == .unreadable
                && (error as? FeedError)?.message.hasPrefix("replay file /nonexistent/trades.csv:") == true
        }
        hub.close()
    }
}
