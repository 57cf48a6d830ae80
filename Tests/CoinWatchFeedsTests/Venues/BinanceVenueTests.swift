import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct BinanceVenueTests {
    typealias F = PriceFixtures
    let venue = BinanceVenue()

    @Test func subscribesToCombinedTradeStreams() {
        #expect(venue.defaultInstrument("BTC") == "btcusdt")
        #expect(venue.subscribeMessages(["btcusdt", "ETHUSDT"])
            == ["{\"method\":\"SUBSCRIBE\",\"params\":[\"btcusdt@trade\",\"ethusdt@trade\"],\"id\":1}"])
    }

    @Test func readsTradesExactlyWithTheirIds() throws {
        let message = try venue.read(text: """
            {"stream":"btcusdt@trade","data":{"e":"trade","E":1718000000010,"s":"BTCUSDT","t":3600000001,\
            "p":"64250.50000000","q":"0.01000000","T":1718000000009,"m":true,"M":true}}
            """)
        #expect(message == .trades([VenueTrade(
            instrument: "BTCUSDT", price: F.price("64250.5"), timeMs: 1_718_000_000_009, number: 3_600_000_001,
            numberIsConsecutive: true)]))
        let aggregate = try venue.read(text: #"{"e":"aggTrade","E":5,"s":"ETHUSDT","a":7,"p":"3450.25","T":4}"#)
        #expect(aggregate == .trades([VenueTrade(
            instrument: "ETHUSDT", price: F.price("3450.25"), timeMs: 4, number: 7, numberIsConsecutive: true)]))
    }

    @Test func readsAcknowledgementsAndErrors() throws {
        #expect(try venue.read(text: #"{"result":null,"id":1}"#) == .subscribed("id 1"))
        #expect(try venue.read(text: #"{"error":{"code":2,"msg":"Invalid request"},"id":1}"#)
            == .venueError("error 2: Invalid request", rateLimited: false))
        #expect(try venue.read(text: #"{"error":{"code":-1003,"msg":"Too many requests"},"id":1}"#)
            == .venueError("error -1003: Too many requests", rateLimited: true))
        #expect(try venue.read(text: #"{"stream":"btcusdt@depth","data":{"e":"depthUpdate"}}"#)
            == .unknown("event 'depthUpdate'"))
        #expect(try venue.read(text: #"{"hello":1}"#) == .unknown("a message with keys hello"))
    }

    @Test func badTradesAreRefused() {
        for text in [
            #"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","p":"abc","T":1}}"#,
            #"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","p":"-1","T":1}}"#,
            #"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","p":"0","T":1}}"#,
            #"{"stream":"x","data":{"e":"trade","p":"1","T":1}}"#,
            #"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","p":"1","T":1,"t":-4}}"#,
            #"{"stream":"x","data":{"e":"trade","s":"BTCUSDT","p":"1","T":"soon"}}"#,
            #"{"stream":"x","data":[1]}"#,
            #"[1]"#,
            #"{"stream":"x","data":"#,
        ] {
            #expect(throws: VenueParseError.self, "\(text)") { try venue.read(text: text) }
        }
    }
}
