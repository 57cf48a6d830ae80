/// Kraken spot WebSocket v2 (docs.kraken.com/api/docs/websocket-v2).
///
/// - Endpoint: `wss://ws.kraken.com/v2`.
/// - Subscribe: `{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD",…],"snapshot":false},
///   "req_id":1}` (or the `ticker` channel, whose snapshot gives the last price at once); the answer echoes the
///   method with `"success":true`, a refusal has `"success":false` and an `error`.
/// - Trades: `{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","price":64250.5,"trade_id":4665906,
///   "timestamp":"2024-06-10T12:00:00.123456Z",…}]}`: prices are JSON numbers, read from their text; `trade_id` is
///   one apart per symbol. Ticker: `{"channel":"ticker","data":[{"symbol":…,"last":…}]}`.
/// - Liveness: `{"channel":"heartbeat"}` about once a second whenever nothing else is sent.
/// - Symbols: `BTC` → `BTC/USD` (v2 writes BTC; v1's XBT is an alias).
public struct KrakenVenue: VenueAdapter {
    public enum Channel: String, Sendable, Hashable {
        case trade, ticker
    }

    public var channel: Channel

    public init(channel: Channel = .trade) {
        self.channel = channel
    }

    public var name: String { "kraken" }
    public var defaultURL: String { "wss://ws.kraken.com/v2" }
    public var liveness: VenueLiveness { VenueLiveness(deadline: .seconds(10), pingAfter: .seconds(5)) }

    public func defaultInstrument(_ asset: String) -> String { asset.uppercased() + "/USD" }

    public func subscribeMessages(_ instruments: [String]) -> [String] {
        let symbols = instruments.map { "\"\($0)\"" }.joined(separator: ",")
        let snapshot = channel == .ticker ? "true" : "false"
        return ["{\"method\":\"subscribe\",\"params\":{\"channel\":\"\(channel.rawValue)\",\"symbol\":[\(symbols)],"
            + "\"snapshot\":\(snapshot)},\"req_id\":1}"]
    }

    public func read(_ message: TradeJSON.Value) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        if let method = message["method"]?.string {
            if case .bool(false)? = message["success"] {
                let text = message["error"]?.string ?? "refused"
                let lower = text.lowercased()
                return .venueError("\(method): \(text)", rateLimited: lower.contains("rate") || lower.contains("limit"))
            }
            return method == "subscribe" ? .subscribed(message["result"]?["symbol"]?.string ?? "subscribed")
                : .ignored(String(method.prefix(32)))
        }
        if let error = message["error"]?.string {
            return .venueError(error, rateLimited: error.lowercased().contains("rate"))
        }
        switch message["channel"]?.string {
        case "heartbeat":
            return .heartbeat([])
        case "status":
            return .ignored("status")
        case "trade":
            guard let items = message["data"]?.array else { throw VenueParseError("a trade message needs a \"data\" array") }
            return try Venues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try VenueFields.string(item["symbol"], "symbol"),
                    price: try VenueFields.price(item["price"], "price"),
                    timeMs: try VenueFields.timestamp(item["timestamp"], "timestamp"),
                    number: try VenueFields.number(item["trade_id"], "trade_id"), numberIsConsecutive: true)
            }
        case "ticker":
            guard let items = message["data"]?.array else { throw VenueParseError("a ticker message needs a \"data\" array") }
            return try Venues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try VenueFields.string(item["symbol"], "symbol"),
                    price: try VenueFields.price(item["last"], "last"),
                    timeMs: try VenueFields.timestamp(item["timestamp"], "timestamp"))
            }
        case let other?:
            return .unknown("channel '\(other.prefix(32))'")
        case nil:
            return .unknown(VenueFields.describe(message))
        }
    }
}
