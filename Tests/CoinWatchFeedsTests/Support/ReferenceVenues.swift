import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
@testable import CoinWatchFeeds

// How the venues read a message before the pull reader: a tree of the whole message first, then lookups in it.
// Kept as it was, as the reference the adapters are checked against (on the tree that `ReferenceJSON` builds).

enum ReferenceVenues {
    /// What `adapter` read from `text` before.
    static func read(_ adapter: any VenueAdapter, text: String) throws(VenueParseError) -> VenueMessage {
        let message: ReferenceJSON
        do {
            message = try ReferenceJSON.parse(text)
        } catch {
            throw VenueParseError(error.description)
        }
        switch adapter {
        case is FinnhubVenue: return try ReferenceFinnhub().read(message)
        case is BinanceVenue: return try ReferenceBinance().read(message)
        case let coinbase as CoinbaseVenue: return try ReferenceCoinbase(channel: coinbase.channel).read(message)
        case let kraken as KrakenVenue: return try ReferenceKraken(channel: kraken.channel).read(message)
        default: preconditionFailure("no reference for \(adapter.name)")
        }
    }

    /// Reads a batch of items (Finnhub's and Kraken's `data` arrays): the items that read, and why the others did not.
    static func batch(
        _ items: [ReferenceJSON], _ read: (ReferenceJSON) throws(VenueParseError) -> VenueTrade
    ) throws(VenueParseError) -> VenueMessage {
        var trades: [VenueTrade] = []
        var skipped: [String] = []
        trades.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do {
                trades.append(try read(item))
            } catch {
                skipped.append("data[\(index)]: \(error.message)")
            }
        }
        return .trades(trades, skipped: skipped)
    }
}

private struct ReferenceFinnhub {
    func read(_ message: ReferenceJSON) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        switch message["type"]?.string {
        case "trade":
            guard let items = message["data"]?.array else { throw VenueParseError("a trade message needs a \"data\" array") }
            return try ReferenceVenues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try Fields.string(item["s"], "s"), price: try Fields.price(item["p"], "p"),
                    timeMs: try Fields.epochMilliseconds(item["t"], "t"))
            }
        case "ping":
            return .heartbeat([])
        case "error":
            let text = message["msg"]?.string ?? "error"
            return .venueError(text, rateLimited: text.lowercased().contains("limit"))
        case let other?:
            return .unknown("type '\(other.prefix(32))'")
        case nil:
            return .unknown(Fields.describe(message))
        }
    }
}

private struct ReferenceBinance {
    func read(_ message: ReferenceJSON) throws(VenueParseError) -> VenueMessage {
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
        return .unknown(Fields.describe(message))
    }

    func event(_ data: ReferenceJSON) throws(VenueParseError) -> VenueMessage {
        guard case .object = data else { throw VenueParseError("\"data\" is not an object") }
        switch data["e"]?.string {
        case "trade":
            return .trades([VenueTrade(
                instrument: try Fields.string(data["s"], "s"), price: try Fields.price(data["p"], "p"),
                timeMs: try Fields.epochMilliseconds(data["T"] ?? data["E"], "T"),
                number: try Fields.number(data["t"], "t"), numberIsConsecutive: true)])
        case "aggTrade":
            return .trades([VenueTrade(
                instrument: try Fields.string(data["s"], "s"), price: try Fields.price(data["p"], "p"),
                timeMs: try Fields.epochMilliseconds(data["T"] ?? data["E"], "T"),
                number: try Fields.number(data["a"], "a"), numberIsConsecutive: true)])
        case "serverShutdown":
            return .ignored("server shutdown notice")
        case let other?:
            return .unknown("event '\(other.prefix(32))'")
        case nil:
            return .unknown(Fields.describe(data))
        }
    }
}

private struct ReferenceCoinbase {
    let channel: CoinbaseVenue.Channel

    func read(_ message: ReferenceJSON) throws(VenueParseError) -> VenueMessage {
        guard case .object = message else { throw VenueParseError("expected a JSON object") }
        guard let type = message["type"]?.string else { return .unknown(Fields.describe(message)) }
        switch type {
        case "match", "last_match":
            return .trades([VenueTrade(
                instrument: try Fields.string(message["product_id"], "product_id"),
                price: try Fields.price(message["price"], "price"),
                timeMs: try Fields.timestamp(message["time"], "time"),
                number: try Fields.number(message["trade_id"], "trade_id"), numberIsConsecutive: true)])
        case "ticker":
            return .trades([VenueTrade(
                instrument: try Fields.string(message["product_id"], "product_id"),
                price: try Fields.price(message["price"], "price"),
                timeMs: try Fields.timestamp(message["time"], "time"),
                number: try Fields.number(message["sequence"], "sequence"), numberIsConsecutive: false)])
        case "heartbeat":
            // In ticker mode trade ids jump between batches: only the matches channel can tell a gap from them.
            guard channel == .matches, let last = try Fields.number(message["last_trade_id"], "last_trade_id"),
                  last > 0
            else {
                return .heartbeat([])
            }
            return .heartbeat([VenueSequenceMark(
                instrument: try Fields.string(message["product_id"], "product_id"), lastNumber: last)])
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

private struct ReferenceKraken {
    let channel: KrakenVenue.Channel

    func read(_ message: ReferenceJSON) throws(VenueParseError) -> VenueMessage {
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
            return try ReferenceVenues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try Fields.string(item["symbol"], "symbol"),
                    price: try Fields.price(item["price"], "price"),
                    timeMs: try Fields.timestamp(item["timestamp"], "timestamp"),
                    number: try Fields.number(item["trade_id"], "trade_id"), numberIsConsecutive: true)
            }
        case "ticker":
            guard let items = message["data"]?.array else { throw VenueParseError("a ticker message needs a \"data\" array") }
            return try ReferenceVenues.batch(items) { (item) throws(VenueParseError) in
                VenueTrade(
                    instrument: try Fields.string(item["symbol"], "symbol"),
                    price: try Fields.price(item["last"], "last"),
                    timeMs: try Fields.timestamp(item["timestamp"], "timestamp"))
            }
        case let other?:
            return .unknown("channel '\(other.prefix(32))'")
        case nil:
            return .unknown(Fields.describe(message))
        }
    }
}

/// Field readers shared by the adapters.
private enum Fields {
    /// A positive exact price from a number or a quoted number.
    static func price(_ value: ReferenceJSON?, _ field: String) throws(VenueParseError) -> ExactDecimal {
        guard let text = value?.numberText else { throw VenueParseError("missing \"\(field)\" (price)") }
        let price: ExactDecimal
        do {
            price = try TradeNumber.exactDecimal(text[...])
        } catch {
            throw VenueParseError("price \(error.description)")
        }
        guard price > .zero else { throw VenueParseError("price must be greater than 0 (got \(price))") }
        return price
    }

    static func string(_ value: ReferenceJSON?, _ field: String) throws(VenueParseError) -> String {
        guard let text = value?.string, !text.isEmpty else { throw VenueParseError("missing \"\(field)\"") }
        return text
    }

    /// A whole number ≥ 0 (a trade id, a sequence), from a number or a quoted number; nil when absent.
    static func number(_ value: ReferenceJSON?, _ field: String) throws(VenueParseError) -> UInt64? {
        guard let value else { return nil }
        if case .null = value { return nil }
        guard let text = value.numberText, let number = UInt64(text) else {
            throw VenueParseError("\"\(field)\" is not a whole number ≥ 0")
        }
        return number
    }

    /// Milliseconds since the epoch from a number; nil when absent.
    static func epochMilliseconds(_ value: ReferenceJSON?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let text = value.numberText, let number = Int64(text), number >= 0 else {
            throw VenueParseError("\"\(field)\" '\(value.numberText ?? "?")' is not whole milliseconds since the epoch")
        }
        return number
    }

    /// Milliseconds since the epoch from an RFC 3339 time stamp; nil when absent.
    static func timestamp(_ value: ReferenceJSON?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let text = value.string, let ms = WallClock.milliseconds(rfc3339: text) else {
            throw VenueParseError("\"\(field)\" is not an RFC 3339 time")
        }
        return ms
    }

    /// A short description of an unexpected message, for a log line (never the whole message).
    static func describe(_ value: ReferenceJSON) -> String {
        guard case .object(let members) = value else { return "a message that is not a JSON object" }
        let keys = members.prefix(6).map(\.key).joined(separator: ",")
        return "a message with keys \(keys)\(members.count > 6 ? ",…" : "")"
    }
}
