import CoinWatchProto

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

    public func read(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage {
        var type, product, price, time, tradeID, sequence, lastTradeID, text, reason: JSONReader.Token?
        let object = try VenueFields.object(message) { (reader, key) throws(JSONSyntaxError) in
            switch key {
            case "type": type = try reader.token()
            case "product_id": product = try reader.token()
            case "price": price = try reader.token()
            case "time": time = try reader.token()
            case "trade_id": tradeID = try reader.token()
            case "sequence": sequence = try reader.token()
            case "last_trade_id": lastTradeID = try reader.token()
            case "message": text = try reader.token()
            case "reason": reason = try reader.token()
            default: try reader.skip()
            }
        }
        guard let type = type?.text else { return .unknown(VenueFields.describe(object)) }
        switch type {
        case "match", "last_match", "ticker":
            // A match's trade id is one apart from the last; a ticker's sequence only orders messages.
            let ticker = type == "ticker"
            return context.single(VenueTrade(
                instrument: try VenueFields.instrument(product, "product_id", context.instruments),
                price: try VenueFields.price(price, "price"), timeMs: try VenueFields.timestamp(time, "time"),
                number: ticker
                    ? try VenueFields.number(sequence, "sequence") : try VenueFields.number(tradeID, "trade_id"),
                numberIsConsecutive: !ticker))
        case "heartbeat":
            // In ticker mode trade ids jump between batches: only the matches channel can tell a gap from them.
            guard channel == .matches, let last = try VenueFields.number(lastTradeID, "last_trade_id"), last > 0 else {
                return .heartbeat([])
            }
            return .heartbeat([VenueSequenceMark(
                instrument: try VenueFields.instrument(product, "product_id", context.instruments), lastNumber: last)])
        case "subscriptions":
            return .subscribed("channels")
        case "error":
            let text = [VenueFields.string(text), VenueFields.string(reason)].compactMap { $0 }.joined(separator: ": ")
            return .venueError(text.isEmpty ? "error" : text, rateLimited: text.lowercased().contains("rate limit"))
        default:
            return .unknown("type '\(type.string.prefix(32))'")
        }
    }
}
