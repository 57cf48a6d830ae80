import CoinWatchProto

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

    public func read(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage {
        var stream, data, error, id, result: JSONReader.Token?
        // A combined stream's event is in "data"; a plain stream's is the message itself.
        var inner = Event()
        var outer = Event()
        let object = try VenueFields.object(message) { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "stream": stream = try reader.token()
            case "data":
                inner = Event()
                data = try reader.object { (reader, key) throws(JSONSyntaxError) in
                    guard try inner.take(key, &reader) else { return try reader.skip() }
                }
            case "error": error = try reader.token()
            case "id": id = try reader.token()
            case "result": result = try reader.token()
            default:
                guard try outer.take(key, &reader) else { return try reader.skip() }
            }
        }
        if stream != nil, let data {
            guard case .object(let event) = data else { throw VenueParseError("\"data\" is not an object") }
            return try inner.message(event, &context)
        }
        if let error {
            let code = VenueFields.member("code", of: error)?.numberText ?? "?"
            let text = VenueFields.string(VenueFields.member("msg", of: error)) ?? "unknown error"
            // -1003: too many requests; 429/418 come as HTTP statuses on the upgrade instead.
            return .venueError(
                "error \(code): \(text)", rateLimited: code == "-1003" || text.lowercased().contains("too many"))
        }
        if let id, result != nil {
            return .subscribed("id \(id.numberText ?? "?")")
        }
        if outer.e != nil {
            return try outer.message(object, &context)
        }
        return .unknown(VenueFields.describe(object))
    }

    /// The fields of a trade event that are read (`e`, the event type, and the trade's).
    private struct Event {
        var e, s, p, T, E, t, a: JSONReader.Token?

        /// Takes the value of `key` when it is one of the fields.
        mutating func take(
            _ key: JSONReader.Text, _ reader: inout JSONReader
        ) throws(JSONSyntaxError) -> Bool {
            switch key {
            case "e": e = try reader.token()
            case "s": s = try reader.token()
            case "p": p = try reader.token()
            case "T": T = try reader.token()
            case "E": E = try reader.token()
            case "t": t = try reader.token()
            case "a": a = try reader.token()
            default: return false
            }
            return true
        }

        func message(
            _ object: JSONReader.Nested, _ context: inout VenueReadContext
        ) throws(VenueParseError) -> VenueMessage {
            guard let type = e?.text else { return .unknown(VenueFields.describe(object)) }
            switch type {
            case "trade", "aggTrade":
                // A trade's id is `t`, an aggregate trade's `a`.
                return context.single(VenueTrade(
                    instrument: try VenueFields.instrument(s, "s", context.instruments),
                    price: try VenueFields.price(p, "p"), timeMs: try VenueFields.epochMilliseconds(T ?? E, "T"),
                    number: type == "trade" ? try VenueFields.number(t, "t") : try VenueFields.number(a, "a"),
                    numberIsConsecutive: true))
            case "serverShutdown":
                return .ignored("server shutdown notice")
            default:
                return .unknown("event '\(type.string.prefix(32))'")
            }
        }
    }
}
