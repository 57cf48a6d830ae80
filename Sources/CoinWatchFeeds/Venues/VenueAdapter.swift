import CoinWatchCore
public import CoinWatchModel

/// How a source decides that its connection is dead.
public struct VenueLiveness: Sendable, Hashable {
    /// Reconnect when nothing at all (a message, a heartbeat, a pong) arrived for this long.
    public var deadline: Duration
    /// After this much silence, send a WebSocket ping, so a quiet channel proves it is alive with a pong instead of
    /// being mistaken for a dead one; nil never pings.
    public var pingAfter: Duration?

    public init(deadline: Duration, pingAfter: Duration?) {
        self.deadline = deadline
        self.pingAfter = pingAfter
    }
}

/// One exchange's WebSocket format: where to connect, what to subscribe with, and how to read what comes back.
///
/// Adapters are pure: they do no I/O and keep no state, so a recorded message reads the same in a replay, in a test
/// and on a live connection. Each venue is one file. An adapter throws only for a message of its own format that it
/// cannot read; a message of another shape is `.unknown`, which is how a replay tells the formats apart.
public protocol VenueAdapter: Sendable {
    /// The venue's name in `--feed`, `--feed-url` and logs.
    var name: String { get }
    /// The public endpoint.
    var defaultURL: String { get }
    /// The deadline and ping interval that fit the venue's heartbeat (or lack of one).
    var liveness: VenueLiveness { get }
    /// The venue's default instrument for an asset: `btcusdt`, `BTC-USD`, `BTC/USD`, `BINANCE:BTCUSDT`.
    func defaultInstrument(_ asset: String) -> String
    /// The URL to connect to, given the configured endpoint (Finnhub adds its token).
    func connectURL(_ url: WebSocketURL) -> WebSocketURL
    /// The text messages sent after every upgrade, to subscribe to `instruments`.
    func subscribeMessages(_ instruments: [String]) -> [String]
    /// Reads one message.
    func read(_ message: TradeJSON.Value) throws(VenueParseError) -> VenueMessage
}

/// Every venue CoinWatch knows, by name.
public enum Venues {
    public static let names = ["finnhub", "binance", "coinbase", "kraken"]

    /// The adapter for `name` with its default channel (Finnhub without a token).
    public static func adapter(named name: String, finnhubToken: String? = nil) -> (any VenueAdapter)? {
        switch name {
        case "finnhub": FinnhubVenue(token: finnhubToken)
        case "binance": BinanceVenue()
        case "coinbase": CoinbaseVenue()
        case "kraken": KrakenVenue()
        default: nil
        }
    }

    /// Reads a batch of items (Finnhub's and Kraken's `data` arrays): the items that read, and why the others did not.
    static func batch(
        _ items: [TradeJSON.Value], _ read: (TradeJSON.Value) throws(VenueParseError) -> VenueTrade
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

extension VenueAdapter {
    public func connectURL(_ url: WebSocketURL) -> WebSocketURL { url }

    /// Parses and reads one text message.
    public func read(text: String) throws(VenueParseError) -> VenueMessage {
        let value: TradeJSON.Value
        do {
            value = try TradeJSON.parse(text[...])
        } catch {
            throw VenueParseError(error.description)
        }
        return try read(value)
    }
}

/// Field readers shared by the adapters.
enum VenueFields {
    /// A positive exact price from a number or a quoted number.
    static func price(_ value: TradeJSON.Value?, _ field: String) throws(VenueParseError) -> ExactDecimal {
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

    static func string(_ value: TradeJSON.Value?, _ field: String) throws(VenueParseError) -> String {
        guard let text = value?.string, !text.isEmpty else { throw VenueParseError("missing \"\(field)\"") }
        return text
    }

    /// A whole number ≥ 0 (a trade id, a sequence), from a number or a quoted number; nil when absent.
    static func number(_ value: TradeJSON.Value?, _ field: String) throws(VenueParseError) -> UInt64? {
        guard let value else { return nil }
        if case .null = value { return nil }
        guard let text = value.numberText, let number = UInt64(text) else {
            throw VenueParseError("\"\(field)\" is not a whole number ≥ 0")
        }
        return number
    }

    /// Milliseconds since the epoch from a number; nil when absent.
    static func epochMilliseconds(_ value: TradeJSON.Value?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let text = value.numberText, let number = Int64(text), number >= 0 else {
            throw VenueParseError("\"\(field)\" '\(value.numberText ?? "?")' is not whole milliseconds since the epoch")
        }
        return number
    }

    /// Milliseconds since the epoch from an RFC 3339 time stamp; nil when absent.
    static func timestamp(_ value: TradeJSON.Value?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let text = value.string, let ms = WallClock.milliseconds(rfc3339: text) else {
            throw VenueParseError("\"\(field)\" is not an RFC 3339 time")
        }
        return ms
    }

    /// A short description of an unexpected message, for a log line (never the whole message).
    static func describe(_ value: TradeJSON.Value) -> String {
        guard case .object(let members) = value else { return "a message that is not a JSON object" }
        let keys = members.prefix(6).map(\.key).joined(separator: ",")
        return "a message with keys \(keys)\(members.count > 6 ? ",…" : "")"
    }
}
