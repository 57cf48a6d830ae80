public import CoinWatchCore
public import CoinWatchModel

/// What one venue message means, as its adapter reads it.
public enum VenueMessage: Sendable, Equatable {
    /// Trades (or last prices), in the order the message lists them, and why items of a batch that could not be read
    /// were skipped (the rest of the batch still counts).
    case trades([VenueTrade], skipped: [String] = [])
    /// An application-level heartbeat (Kraken's heartbeat channel, Coinbase's heartbeat, Finnhub's ping). Marks
    /// carry the last number a venue says it sent per instrument, so a silently lost trade is noticed as a gap.
    case heartbeat([VenueSequenceMark])
    /// A subscription was acknowledged.
    case subscribed(String)
    /// The venue reported an error (a refused subscription, a rate limit): the connection backs off longer.
    case venueError(String, rateLimited: Bool)
    /// A known message without prices (a status update, an answer to a ping).
    case ignored(String)
    /// A message this adapter does not know: counted and logged once, never fatal.
    case unknown(String)
}

/// One trade or last price from a venue.
public struct VenueTrade: Sendable, Hashable {
    /// The venue's instrument name, as sent (`BTCUSDT`, `BTC-USD`, `BTC/USD`, `BINANCE:BTCUSDT`).
    public var instrument: String
    /// The price, exactly as the venue wrote it.
    public var price: ExactDecimal
    /// When the venue says it traded, in milliseconds since the Unix epoch, if it says.
    public var timeMs: Int64?
    /// The venue's number for this message on this instrument (a trade id, a sequence), if it numbers them.
    public var number: UInt64?
    /// Whether consecutive messages are numbered one apart (trade ids), so a jump is a gap; otherwise the numbers
    /// only order messages (Coinbase's ticker `sequence`).
    public var numberIsConsecutive: Bool

    public init(
        instrument: String, price: ExactDecimal, timeMs: Int64? = nil, number: UInt64? = nil,
        numberIsConsecutive: Bool = false
    ) {
        self.instrument = instrument
        self.price = price
        self.timeMs = timeMs
        self.number = number
        self.numberIsConsecutive = numberIsConsecutive
    }
}

/// A venue's statement of the last number it sent for an instrument.
public struct VenueSequenceMark: Sendable, Hashable {
    public var instrument: String
    public var lastNumber: UInt64

    public init(instrument: String, lastNumber: UInt64) {
        self.instrument = instrument
        self.lastNumber = lastNumber
    }
}

/// A message that is not what its venue sends: not JSON, or a trade with a missing or bad field.
public struct VenueParseError: CoinWatchError {
    /// The one kind: the message is not what the venue sends.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// Not JSON, or a trade with a missing or bad field.
        public static let malformedMessage = Code("malformedMessage")
    }

    public var code: Code { .malformedMessage }
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
