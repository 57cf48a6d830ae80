import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct CoinbaseVenueTests {
    typealias F = PriceFixtures

    @Test func subscribesToMatchesOrTickerWithHeartbeats() {
        #expect(CoinbaseVenue().defaultInstrument("btc") == "BTC-USD")
        #expect(CoinbaseVenue().subscribeMessages(["BTC-USD", "ETH-USD"]) == [
            #"{"type":"subscribe","product_ids":["BTC-USD","ETH-USD"],"channels":["matches","heartbeat"]}"#,
        ])
        #expect(CoinbaseVenue(channel: .ticker).subscribeMessages(["BTC-USD"]) == [
            #"{"type":"subscribe","product_ids":["BTC-USD"],"channels":["ticker","heartbeat"]}"#,
        ])
    }

    @Test func matchesCarryConsecutiveTradeIds() throws {
        let text = """
            {"type":"match","trade_id":10,"sequence":50,"maker_order_id":"a","taker_order_id":"b",\
            "time":"2024-06-10T06:13:20.123456Z","product_id":"BTC-USD","size":"5.23512","price":"64250.01",\
            "side":"sell"}
            """
        #expect(try CoinbaseVenue().read(text: text) == .trades([VenueTrade(
            instrument: "BTC-USD", price: F.price("64250.01"), timeMs: 1_718_000_000_123,
            number: 10, numberIsConsecutive: true)]))
        let last = try CoinbaseVenue().read(text: #"{"type":"last_match","trade_id":9,"product_id":"BTC-USD","price":"1.5","time":"2024-06-10T06:13:20Z"}"#)
        #expect(last == .trades([VenueTrade(
            instrument: "BTC-USD", price: F.price("1.5"), timeMs: 1_718_000_000_000, number: 9,
            numberIsConsecutive: true)]))
    }

    @Test func tickerSequencesOnlyOrder() throws {
        let text = #"{"type":"ticker","sequence":37475248783,"product_id":"ETH-USD","price":"3450.25","time":"2024-06-10T00:00:00.000001Z","trade_id":370843401}"#
        #expect(try CoinbaseVenue(channel: .ticker).read(text: text) == .trades([VenueTrade(
            instrument: "ETH-USD", price: F.price("3450.25"), timeMs: 1_717_977_600_000, number: 37_475_248_783,
            numberIsConsecutive: false)]))
    }

    @Test func heartbeatsMarkTheLastTradeOnTheMatchesChannel() throws {
        let text = #"{"type":"heartbeat","sequence":90,"last_trade_id":20,"product_id":"BTC-USD","time":"2024-06-10T00:00:00Z"}"#
        #expect(try CoinbaseVenue().read(text: text)
            == .heartbeat([VenueSequenceMark(instrument: "BTC-USD", lastNumber: 20)]))
        #expect(try CoinbaseVenue(channel: .ticker).read(text: text) == .heartbeat([]))
    }

    @Test func readsAcknowledgementsAndErrors() throws {
        #expect(try CoinbaseVenue().read(text: #"{"type":"subscriptions","channels":[]}"#) == .subscribed("channels"))
        #expect(try CoinbaseVenue().read(text: #"{"type":"error","message":"Failed to subscribe","reason":"BTC-XYZ is not a valid product"}"#)
            == .venueError("Failed to subscribe: BTC-XYZ is not a valid product", rateLimited: false))
        #expect(try CoinbaseVenue().read(text: #"{"type":"error","message":"rate limit exceeded"}"#)
            == .venueError("rate limit exceeded", rateLimited: true))
        #expect(try CoinbaseVenue().read(text: #"{"type":"l2update"}"#) == .unknown("type 'l2update'"))
    }

    @Test func badMatchesAreRefused() {
        for text in [
            #"{"type":"match","product_id":"BTC-USD","price":"x","time":"2024-06-10T00:00:00Z"}"#,
            #"{"type":"match","product_id":"BTC-USD","price":"1","time":"yesterday"}"#,
            #"{"type":"match","price":"1","time":"2024-06-10T00:00:00Z"}"#,
            #"{"type":"match","product_id":"BTC-USD","price":"1","trade_id":"1.5"}"#,
        ] {
            #expect(throws: VenueParseError.self, "\(text)") { try CoinbaseVenue().read(text: text) }
        }
    }
}
