import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct FinnhubVenueTests {
    typealias F = PriceFixtures

    @Test func theTokenGoesIntoTheQueryEncoded() throws {
        let url = try WebSocketURL(parsing: "wss://ws.finnhub.io")
        #expect(FinnhubVenue(token: "abc123").connectURL(url).target == "/?token=abc123")
        #expect(FinnhubVenue(token: "a b&c").connectURL(url).target == "/?token=a%20b%26c")
        #expect(FinnhubVenue(token: "t").connectURL(try WebSocketURL(parsing: "ws://h/x?y=1")).target == "/x?y=1&token=t")
        #expect(FinnhubVenue(token: nil).connectURL(url).target == "/")
        #expect(!FinnhubVenue(token: "secret").connectURL(url).redacted.contains("secret"))
    }

    @Test func subscribesOnePerInstrument() {
        #expect(FinnhubVenue().defaultInstrument("eth") == "BINANCE:ETHUSDT")
        #expect(FinnhubVenue().subscribeMessages(["BINANCE:BTCUSDT", "BINANCE:ETHUSDT"]) == [
            #"{"type":"subscribe","symbol":"BINANCE:BTCUSDT"}"#, #"{"type":"subscribe","symbol":"BINANCE:ETHUSDT"}"#,
        ])
    }

    @Test func readsTradeBatchesPingsAndErrors() throws {
        let venue = FinnhubVenue()
        #expect(try venue.read(text: #"{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467},{"p":6.42505e4,"s":"BINANCE:BTCUSDT","t":1575526691135,"v":0}]}"#)
            == .trades([
                VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("7296.89"), timeMs: 1_575_526_691_134),
                VenueTrade(instrument: "BINANCE:BTCUSDT", price: F.price("64250.5"), timeMs: 1_575_526_691_135),
            ]))
        #expect(try venue.read(text: #"{"type":"ping"}"#) == .heartbeat([]))
        #expect(try venue.read(text: #"{"type":"error","msg":"Subscribing to too many symbols"}"#)
            == .venueError("Subscribing to too many symbols", rateLimited: false))
        #expect(try venue.read(text: #"{"type":"error","msg":"API limit reached"}"#)
            == .venueError("API limit reached", rateLimited: true))
        #expect(try venue.read(text: #"{"type":"news"}"#) == .unknown("type 'news'"))
    }
}
