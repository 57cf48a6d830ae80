/// Finnhub trades (finnhub.io/docs/api/websocket-trades).
///
/// - Endpoint: `wss://ws.finnhub.io?token=TOKEN`; the token comes from `--finnhub-token` or
///   `COINWATCH_FINNHUB_TOKEN` and is a secret: logs show the URL without its query.
/// - Subscribe: one `{"type":"subscribe","symbol":"BINANCE:BTCUSDT"}` per instrument.
/// - Trades: batches `{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}]}`;
///   prices are JSON numbers, read from their text; no sequence numbers.
/// - Liveness: `{"type":"ping"}` now and then; quiet symbols can be silent for long, so the deadline is long and our
///   own pings keep a quiet connection proven.
/// - Symbols: `BTC` → `BINANCE:BTCUSDT`.
public struct FinnhubVenue: VenueAdapter {
    public var token: String?

    public init(token: String? = nil) {
        self.token = token
    }

    public var name: String { "finnhub" }
    public var defaultURL: String { "wss://ws.finnhub.io" }
    public var liveness: VenueLiveness { VenueLiveness(deadline: .seconds(60), pingAfter: .seconds(20)) }

    public func defaultInstrument(_ asset: String) -> String { "BINANCE:" + asset.uppercased() + "USDT" }

    public func connectURL(_ url: WebSocketURL) -> WebSocketURL {
        guard let token, !token.isEmpty else { return url }
        var url = url
        let encoded = token.utf8.map { byte -> String in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                 UInt8(ascii: "~"):
                String(UnicodeScalar(byte))
            default:
                "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }.joined()
        url.target += (url.target.contains("?") ? "&" : "?") + "token=" + encoded
        return url
    }

    public func subscribeMessages(_ instruments: [String]) -> [String] {
        instruments.map { "{\"type\":\"subscribe\",\"symbol\":\"\($0)\"}" }
    }

    public func read(_ message: TradeJSON.Value) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        switch message["type"]?.string {
        case "trade":
            guard let items = message["data"]?.array else { throw VenueParseError("a trade message needs a \"data\" array") }
            return try Venues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try VenueFields.string(item["s"], "s"), price: try VenueFields.price(item["p"], "p"),
                    timeMs: try VenueFields.epochMilliseconds(item["t"], "t"))
            }
        case "ping":
            return .heartbeat([])
        case "error":
            let text = message["msg"]?.string ?? "error"
            return .venueError(text, rateLimited: text.lowercased().contains("limit"))
        case let other?:
            return .unknown("type '\(other.prefix(32))'")
        case nil:
            return .unknown(VenueFields.describe(message))
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
