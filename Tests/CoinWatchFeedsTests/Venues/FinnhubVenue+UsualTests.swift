import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

/// The straight-through reading of Finnhub's usual trade layout gives what the general walk gives, or nothing.
struct FinnhubVenueUsualTests {
    typealias F = PriceFixtures

    static let usual = [
        #"{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}]}"#,
        #"{"data":[{"c":null,"p":64250.5,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467},{"c":["1","12"],"p":3450,"s":"BINANCE:ETHUSDT","t":2,"v":1e-3}],"type":"trade"}"#,
        #"{"type":"trade","data":[{"s":"COINBASE:BTC-USD","v":5,"p":0.00000000000000001},{"p":100.10,"s":"BINANCE:BTCUSDT","x":{"y":[1,{"z":"w"}]}}]}"#,
    ]

    /// Reads `bytes` both ways, each with a context of its own; returns whether the usual reading took it.
    @discardableResult
    static func compare(_ bytes: [UInt8], subscribed: [String] = ["BINANCE:BTCUSDT"]) -> Bool {
        bytes.withUnsafeBytes { message in
            var usualContext = VenueReadContext(instruments: VenueInstruments(subscribed))
            var walkContext = VenueReadContext(instruments: VenueInstruments(subscribed))
            guard let usual = FinnhubVenue.usualTrades(message, &usualContext) else { return false }
            let walked = Result { () throws(VenueParseError) in try FinnhubVenue().walk(message, &walkContext) }
            #expect(walked == .success(usual), "\(String(decoding: bytes, as: UTF8.self))")
            return true
        }
    }

    @Test func readsTheUsualLayoutAsTheWalkDoes() {
        for message in Self.usual {
            #expect(Self.compare(Array(message.utf8)), "not taken: \(message)")
        }
        var context = VenueReadContext()
        let read = Array(Self.usual[1].utf8).withUnsafeBytes { FinnhubVenue.usualTrades($0, &context) }
        #expect(read == .trades([
            VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("64250.5"), timeMs: 1_575_526_691_134),
            VenueTrade(instrument: "BINANCE:ETHUSDT", price: F.price("3450"), timeMs: 2),
        ]))
    }

    /// Each of these differs from the usual layout in one way the general walk handles (or refuses) itself.
    @Test func leavesEverythingElseToTheWalk() {
        let others = [
            #"{ "type":"trade","data":[{"p":1,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":1,"s":"BINANCE:BTCUSDT"}]} "#,
            #"{"type":"trade","data":[{"p":"1","s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":1,"s":"BINANCE:\u0042TCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":1,"p":2,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":0,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":-1,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":6.42505e4,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":1234567890.123456789,"s":"BINANCE:BTCUSDT"}]}"#,
            #"{"type":"trade","data":[{"p":1,"s":"BINANCE:BTCUSDT","t":1.5}]}"#,
            #"{"type":"trade","data":[{"p":1,"s":""}]}"#,
            #"{"type":"trade","data":[{"p":1}]}"#,
            #"{"type":"trade","data":[]}"#,
            #"{"type":"trade","data":[{"p":1,"s":"BINANCE:BTCUSDT"}],"type":"trade"}"#,
            #"{"data":[{"p":1,"s":"BINANCE:BTCUSDT"}],"type":"ping"}"#,
            #"{"type":"ping"}"#,
        ]
        for message in others {
            var context = VenueReadContext()
            let read = Array(message.utf8).withUnsafeBytes { FinnhubVenue.usualTrades($0, &context) }
            #expect(read == nil, "taken: \(message)")
        }
    }

    /// Over broken copies of the usual messages: whatever the usual reading takes, it reads as the walk does. Both
    /// outcomes must occur, or the comparison proved nothing.
    @Test func brokenCopiesAreReadAsTheWalkReadsThemOrNotAtAll() {
        var taken = 0
        var left = 0
        for (index, message) in Self.usual.enumerated() {
            let random = MessageMutations.random(of: message, count: 2000, seed: UInt64(100 + index))
            for mutated in MessageMutations.everyPosition(of: message) + random {
                for subscribed in [["BINANCE:BTCUSDT"], []] {
                    if Self.compare(mutated, subscribed: subscribed) { taken += 1 } else { left += 1 }
                }
            }
        }
        #expect(taken > 1000)
        #expect(left > 1000)
    }

    /// `read` gives the usual reading's answer where it has one and the walk's elsewhere.
    @Test func readTakesEitherWay() throws {
        let venue = FinnhubVenue()
        #expect(try venue.read(text: Self.usual[0]) == .trades([
            VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("7296.89"), timeMs: 1_575_526_691_134),
        ]))
        #expect(try venue.read(text: #"{"type":"trade", "data":[{"p":"7296.89","s":"BINANCE:BTCUSDT"}]}"#) == .trades([
            VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("7296.89")),
        ]))
    }
}
