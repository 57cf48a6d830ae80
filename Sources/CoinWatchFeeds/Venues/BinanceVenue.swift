/// Binance spot trade streams (developers.binance.com, "WebSocket Streams").
///
/// - Endpoint: `wss://stream.binance.com:9443/stream`, the combined-stream path, so every event arrives wrapped as
///   `{"stream":"btcusdt@trade","data":{…}}` and one connection carries every symbol.
/// - Subscribe: `{"method":"SUBSCRIBE","params":["btcusdt@trade",…],"id":1}`; the answer is `{"result":null,"id":1}`,
///   an error `{"error":{"code":…,"msg":…},"id":1}`.
/// - Trades: `{"e":"trade","E":…,"s":"BTCUSDT","t":12345,"p":"64250.50000000","q":…,"T":…}`: the price is quoted
///   text, `T` the trade time, `t` the trade id, one apart per symbol (a jump is a gap).
/// - Liveness: no application heartbeat. The server pings every 20 s and the client's pong is automatic; a quiet
///   stream is told apart from a dead one by our own pings.
/// - Symbols: `BTC` → `btcusdt` (USDT is Binance's dollar).
public struct BinanceVenue: VenueAdapter {
    public init() {}

    public var name: String { "binance" }
    public var defaultURL: String { "wss://stream.binance.com:9443/stream" }
    public var liveness: VenueLiveness { VenueLiveness(deadline: .seconds(30), pingAfter: .seconds(10)) }

    public func defaultInstrument(_ asset: String) -> String { asset.lowercased() + "usdt" }

    public func subscribeMessages(_ instruments: [String]) -> [String] {
        let streams = instruments.map { "\"\($0.lowercased())@trade\"" }.joined(separator: ",")
        return ["{\"method\":\"SUBSCRIBE\",\"params\":[\(streams)],\"id\":1}"]
    }

    public func read(_ message: TradeJSON.Value) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        if message["stream"] != nil, let inner = message["data"] {
            return try event(inner)
        }
        if let error = message["error"] {
            let code = error["code"]?.numberText ?? "?"
            let text = error["msg"]?.string ?? "unknown error"
            // -1003: too many requests; 429/418 come as HTTP statuses on the upgrade instead.
            return .venueError("error \(code): \(text)", rateLimited: code == "-1003" || text.lowercased().contains("too many"))
        }
        if message["id"] != nil, message["result"] != nil {
            return .subscribed("id \(message["id"]?.numberText ?? "?")")
        }
        if message["e"] != nil {
            return try event(message)
        }
        return .unknown(VenueFields.describe(message))
    }

    private func event(_ data: TradeJSON.Value) throws(VenueParseError) -> VenueMessage {
        guard case .object = data else { throw VenueParseError("\"data\" is not an object") }
        switch data["e"]?.string {
        case "trade":
            return .trades([VenueTrade(
                instrument: try VenueFields.string(data["s"], "s"), price: try VenueFields.price(data["p"], "p"),
                timeMs: try VenueFields.epochMilliseconds(data["T"] ?? data["E"], "T"),
                number: try VenueFields.number(data["t"], "t"), numberIsConsecutive: true)])
        case "aggTrade":
            return .trades([VenueTrade(
                instrument: try VenueFields.string(data["s"], "s"), price: try VenueFields.price(data["p"], "p"),
                timeMs: try VenueFields.epochMilliseconds(data["T"] ?? data["E"], "T"),
                number: try VenueFields.number(data["a"], "a"), numberIsConsecutive: true)])
        case "serverShutdown":
            return .ignored("server shutdown notice")
        case let other?:
            return .unknown("event '\(other.prefix(32))'")
        case nil:
            return .unknown(VenueFields.describe(data))
        }
    }
}
