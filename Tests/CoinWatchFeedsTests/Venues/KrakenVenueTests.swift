import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct KrakenVenueTests {
    typealias F = PriceFixtures

    @Test func subscribesToTradesOrTickerWithASnapshot() {
        #expect(KrakenVenue().defaultInstrument("BTC") == "BTC/USD")
        #expect(KrakenVenue().subscribeMessages(["BTC/USD", "ETH/USD"]) == [
            #"{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD","ETH/USD"],"snapshot":false},"req_id":1}"#,
        ])
        #expect(KrakenVenue(channel: .ticker).subscribeMessages(["BTC/USD"]) == [
            #"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"],"snapshot":true},"req_id":1}"#,
        ])
    }

    @Test func tradeBatchesKeepEveryDigitAndSkipBadItems() throws {
        let text = """
            {"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"sell","price":64250.5,"qty":0.01,\
            "ord_type":"market","trade_id":4665906,"timestamp":"2024-06-10T00:00:01.5Z"},{"symbol":"BTC/USD",\
            "price":"nope","trade_id":4665907,"timestamp":"2024-06-10T00:00:01.6Z"},{"symbol":"XBT/USD",\
            "price":0.000012345678901234,"trade_id":4665908,"timestamp":"2024-06-10T00:00:01.7Z"}]}
            """
        guard case .trades(let trades, let skipped) = try KrakenVenue().read(text: text) else {
            Issue.record("not trades")
            return
        }
        #expect(trades == [
            VenueTrade(instrument: "BTC/USD", price: F.price("64250.5"), timeMs: 1_717_977_601_500, number: 4_665_906,
                       numberIsConsecutive: true),
            VenueTrade(instrument: "XBT/USD", price: F.price("0.000012345678901234"), timeMs: 1_717_977_601_700,
                       number: 4_665_908, numberIsConsecutive: true),
        ])
        #expect(skipped.count == 1)
        #expect(skipped.first?.hasPrefix("data[1]: price 'nope'") == true)
    }

    @Test func tickerGivesTheLastPrice() throws {
        let text = #"{"channel":"ticker","type":"snapshot","data":[{"symbol":"ETH/USD","bid":3450.1,"ask":3450.3,"last":3450.25,"volume":12.5}]}"#
        #expect(try KrakenVenue(channel: .ticker).read(text: text)
            == .trades([VenueTrade(instrument: "ETH/USD", price: F.price("3450.25"))]))
    }

    @Test func readsHeartbeatsStatusAndAcknowledgements() throws {
        let venue = KrakenVenue()
        #expect(try venue.read(text: #"{"channel":"heartbeat"}"#) == .heartbeat([]))
        #expect(try venue.read(text: #"{"channel":"status","type":"update","data":[{"system":"online"}]}"#) == .ignored("status"))
        #expect(try venue.read(text: #"{"method":"subscribe","result":{"channel":"trade","symbol":"BTC/USD"},"success":true,"req_id":1}"#)
            == .subscribed("BTC/USD"))
        #expect(try venue.read(text: #"{"method":"subscribe","error":"Currency pair not supported BTC/XYZ","success":false,"req_id":1}"#)
            == .venueError("subscribe: Currency pair not supported BTC/XYZ", rateLimited: false))
        #expect(try venue.read(text: #"{"method":"subscribe","error":"Exceeded msg rate","success":false}"#)
            == .venueError("subscribe: Exceeded msg rate", rateLimited: true))
        #expect(try venue.read(text: #"{"method":"pong","req_id":3}"#) == .ignored("pong"))
        #expect(try venue.read(text: #"{"channel":"book","data":[]}"#) == .unknown("channel 'book'"))
    }

    @Test func aTradeMessageWithoutDataIsRefused() {
        #expect(throws: VenueParseError.self) { try KrakenVenue().read(text: #"{"channel":"trade","data":{}}"#) }
    }
}
