/// Coinbase Exchange market data (docs.cdp.coinbase.com/exchange/websocket-feed).
///
/// - Endpoint: `wss://ws-feed.exchange.coinbase.com`.
/// - Subscribe: `{"type":"subscribe","product_ids":["BTC-USD",…],"channels":["matches","heartbeat"]}` (or `ticker`
///   instead of `matches`); the answer is `{"type":"subscriptions",…}`, a refusal `{"type":"error","message":…}`.
/// - Trades: `match` (and `last_match`, the latest trade, sent once on subscribe) with the quoted `price`, `time`
///   (RFC 3339) and `trade_id`, one apart per product, so a jump is a gap; `ticker` carries `price` and the product's
///   `sequence`, which only orders messages (the book's other events take numbers in between).
/// - Liveness: the `heartbeat` channel, once a second per product, with `last_trade_id`: a trade id beyond the last
///   one seen is a trade that never arrived.
/// - Symbols: `BTC` → `BTC-USD`.
public struct CoinbaseVenue: VenueAdapter {
    public enum Channel: String, Sendable, Hashable {
        case matches, ticker
    }

    public var channel: Channel

    public init(channel: Channel = .matches) {
        self.channel = channel
    }

    public var name: String { "coinbase" }
    public var defaultURL: String { "wss://ws-feed.exchange.coinbase.com" }
    public var liveness: VenueLiveness { VenueLiveness(deadline: .seconds(10), pingAfter: .seconds(5)) }

    public func defaultInstrument(_ asset: String) -> String { asset.uppercased() + "-USD" }

    public func subscribeMessages(_ instruments: [String]) -> [String] {
        let products = instruments.map { "\"\($0)\"" }.joined(separator: ",")
        return ["{\"type\":\"subscribe\",\"product_ids\":[\(products)],\"channels\":[\"\(channel.rawValue)\",\"heartbeat\"]}"]
    }

    public func read(_ message: TradeJSON.Value) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        guard let type = message["type"]?.string else { return .unknown(VenueFields.describe(message)) }
        switch type {
        case "match", "last_match":
            return .trades([VenueTrade(
                instrument: try VenueFields.string(message["product_id"], "product_id"),
                price: try VenueFields.price(message["price"], "price"),
                timeMs: try VenueFields.timestamp(message["time"], "time"),
                number: try VenueFields.number(message["trade_id"], "trade_id"), numberIsConsecutive: true)])
        case "ticker":
            return .trades([VenueTrade(
                instrument: try VenueFields.string(message["product_id"], "product_id"),
                price: try VenueFields.price(message["price"], "price"),
                timeMs: try VenueFields.timestamp(message["time"], "time"),
                number: try VenueFields.number(message["sequence"], "sequence"), numberIsConsecutive: false)])
        case "heartbeat":
            // In ticker mode trade ids jump between batches: only the matches channel can tell a gap from them.
            guard channel == .matches, let last = try VenueFields.number(message["last_trade_id"], "last_trade_id"),
                  last > 0
            else {
                return .heartbeat([])
            }
            return .heartbeat([VenueSequenceMark(
                instrument: try VenueFields.string(message["product_id"], "product_id"), lastNumber: last)])
        case "subscriptions":
            return .subscribed("channels")
        case "error":
            let text = [message["message"]?.string, message["reason"]?.string].compactMap { $0 }.joined(separator: ": ")
            return .venueError(text.isEmpty ? "error" : text, rateLimited: text.lowercased().contains("rate limit"))
        default:
            return .unknown("type '\(type.prefix(32))'")
        }
    }
}
