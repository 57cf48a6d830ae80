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
///
/// A message is read in one pass over its bytes with `JSONReader`, taking the fields the venue needs and
/// skipping (while checking) the rest, and a syntax error anywhere refuses it before anything else is said about
/// it. Keys may come in any order and the last of a repeated key counts, so an adapter keeps the values it may
/// need and decides what the message is at its end.
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
    /// Reads one message from its bytes (UTF-8, only for the call). Trades go into `context`'s list, which the
    /// message returned shares until the next read.
    func read(
        _ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext
    ) throws(VenueParseError) -> VenueMessage
    /// Reads `message` straight into `context`'s list of trades when it is in the layout the venue sends its trades
    /// in, and says whether it was; false leaves the message to `read`. What it takes is what `read` would give as
    /// `.trades`. A live source calls this first, so the messages of a flood cost no `VenueMessage`; the default
    /// takes nothing.
    func readUsualTrades(_ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext) -> Bool
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
}

extension VenueAdapter {
    public func connectURL(_ url: WebSocketURL) -> WebSocketURL { url }

    public func readUsualTrades(_ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext) -> Bool { false }

    /// Reads one text message, on its own (a test's, a tool's): no instrument is subscribed to.
    public func read(text: String) throws(VenueParseError) -> VenueMessage {
        var text = text
        var context = VenueReadContext()
        let read = text.withUTF8 { utf8 in
            Result { () throws(VenueParseError) in try self.read(UnsafeRawBufferPointer(utf8), &context) }
        }
        return try read.get()
    }
}
