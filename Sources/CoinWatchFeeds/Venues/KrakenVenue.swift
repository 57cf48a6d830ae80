import CoinWatchProto

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

    public func read(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage {
        var method, success, error, result, channel: JSONReader.Token?
        var data = VenueBatch<Channel>()
        let instruments = context.instruments
        let object = try VenueFields.object(message) { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "method": method = try reader.token()
            case "success": success = try reader.token()
            case "error": error = try reader.token()
            case "result": result = try reader.token()
            case "channel": channel = try reader.token()
            case "data":
                // Read as the items of the channel named so far (none, when it names another), or else of the
                // channel subscribed to.
                let items = channel == nil ? self.channel : Self.channel(channel)
                try data.read(&reader, &context, as: items) { (reader) throws(JSONSyntaxError) in
                    try Self.trade(&reader, as: items ?? .trade, instruments)
                }
            default: try reader.skip()
            }
        }
        if let method = VenueFields.string(method) {
            if case .bool(false)? = success {
                let text = VenueFields.string(error) ?? "refused"
                let lower = text.lowercased()
                return .venueError("\(method): \(text)", rateLimited: lower.contains("rate") || lower.contains("limit"))
            }
            return method == "subscribe"
                ? .subscribed(VenueFields.string(VenueFields.member("symbol", of: result)) ?? "subscribed")
                : .ignored(String(method.prefix(32)))
        }
        if let error = VenueFields.string(error) {
            return .venueError(error, rateLimited: error.lowercased().contains("rate"))
        }
        guard let name = channel?.text else { return .unknown(VenueFields.describe(object)) }
        switch name {
        case "heartbeat":
            return .heartbeat([])
        case "status":
            return .ignored("status")
        case "trade", "ticker":
            let items = Self.channel(channel) ?? .trade
            let missing = items == .trade
                ? "a trade message needs a \"data\" array" : "a ticker message needs a \"data\" array"
            return try data.trades(as: items, &context, missing: missing) { (reader) throws(JSONSyntaxError) in
                try Self.trade(&reader, as: items, instruments)
            }
        default:
            return .unknown("channel '\(name.string.prefix(32))'")
        }
    }

    /// The channel a message's `channel` names, when it is one whose data are prices.
    private static func channel(_ value: JSONReader.Token?) -> Channel? {
        switch value?.text {
        case "trade"?: .trade
        case "ticker"?: .ticker
        default: nil
        }
    }

    /// One item of a `data` array: a trade (`symbol`, `price`, `timestamp`, `trade_id`), or a ticker (`symbol`,
    /// `last`, `timestamp`).
    private static func trade(
        _ reader: inout JSONReader, as channel: Channel, _ instruments: VenueInstruments
    ) throws(JSONSyntaxError) -> Result<VenueTrade, VenueParseError> {
        var symbol, price, last, timestamp, tradeID: JSONReader.Token?
        try reader.object { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "symbol": symbol = try reader.token()
            case "price": price = try reader.token()
            case "last": last = try reader.token()
            case "timestamp": timestamp = try reader.token()
            case "trade_id": tradeID = try reader.token()
            default: try reader.skip()
            }
        }
        return Result { () throws(VenueParseError) in
            switch channel {
            case .trade:
                VenueTrade(
                    instrument: try VenueFields.instrument(symbol, "symbol", instruments),
                    price: try VenueFields.price(price, "price"),
                    timeMs: try VenueFields.timestamp(timestamp, "timestamp"),
                    number: try VenueFields.number(tradeID, "trade_id"), numberIsConsecutive: true)
            case .ticker:
                VenueTrade(
                    instrument: try VenueFields.instrument(symbol, "symbol", instruments),
                    price: try VenueFields.price(last, "last"),
                    timeMs: try VenueFields.timestamp(timestamp, "timestamp"))
            }
        }
    }
}
