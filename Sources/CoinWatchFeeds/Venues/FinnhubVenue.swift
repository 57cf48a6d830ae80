import CoinWatchProto

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

    public func read(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage {
        if Self.readUsualTrades(message, &context) { return context.message }
        return try walk(message, &context)
    }

    public func readUsualTrades(_ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext) -> Bool {
        Self.readUsualTrades(message, &context)
    }

    /// Reads any message member by member: what `read` does with one not in the usual layout.
    func walk(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage {
        var type: JSONReader.Token?
        var text: JSONReader.Token?
        var data = VenueBatch<Items>()
        let instruments = context.instruments
        let object = try VenueFields.object(message) { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "type": type = try reader.token()
            case "msg": text = try reader.token()
            case "data":
                // Only trade messages carry data: read it as trades unless the message named another type.
                let trades = type == nil || type?.text.map { $0 == "trade" } == true
                try data.read(&reader, &context, as: trades ? .trades : nil) { (reader) throws(JSONSyntaxError) in
                    try Self.trade(&reader, instruments)
                }
            default: try reader.skip()
            }
        }
        guard let type = type?.text else { return .unknown(VenueFields.describe(object)) }
        switch type {
        case "trade":
            return try data.trades(as: .trades, &context, missing: "a trade message needs a \"data\" array") {
                (reader) throws(JSONSyntaxError) in try Self.trade(&reader, instruments)
            }
        case "ping":
            return .heartbeat([])
        case "error":
            let text = VenueFields.string(text) ?? "error"
            return .venueError(text, rateLimited: text.lowercased().contains("limit"))
        default:
            return .unknown("type '\(type.string.prefix(32))'")
        }
    }

    /// What a `data` array holds.
    private enum Items {
        case trades
    }

    /// One item of a trade batch: `{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}`.
    private static func trade(
        _ reader: inout JSONReader, _ instruments: VenueInstruments
    ) throws(JSONSyntaxError) -> Result<VenueTrade, VenueParseError> {
        var s, p, t: JSONReader.Token?
        try reader.object { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "s": s = try reader.token()
            case "p": p = try reader.token()
            case "t": t = try reader.token()
            default: try reader.skip()
            }
        }
        return Result { () throws(VenueParseError) in
            VenueTrade(
                instrument: try VenueFields.instrument(s, "s", instruments), price: try VenueFields.price(p, "p"),
                timeMs: try VenueFields.epochMilliseconds(t, "t"))
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
