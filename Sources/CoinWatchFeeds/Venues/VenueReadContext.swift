/// What reading a venue's messages keeps from one message to the next, so that reading a trade message allocates
/// nothing: the instruments subscribed to (a trade's instrument is then the subscribed `String`, not a new one) and
/// the list the trades are gathered in.
///
/// A `.trades` message shares that list until the next read, which empties it and reuses its storage when the
/// message has been let go (a message kept longer keeps its trades: the list is copied then, not changed).
public struct VenueReadContext {
    public let instruments: VenueInstruments
    private(set) var trades: [VenueTrade] = []
    private(set) var skipped: [String] = []

    public init(instruments: VenueInstruments = VenueInstruments()) {
        self.instruments = instruments
    }

    /// Starts a new list of trades.
    mutating func startTrades() {
        trades.removeAll(keepingCapacity: trades.capacity <= 1024)
        if !skipped.isEmpty { skipped = [] }
    }

    mutating func append(_ trade: VenueTrade) {
        trades.append(trade)
    }

    /// An item of a batch that could not be read, and why.
    mutating func skip(_ reason: String) {
        skipped.append(reason)
    }

    /// The list as a message.
    var message: VenueMessage { .trades(trades, skipped: skipped) }

    /// A message of one trade.
    mutating func single(_ trade: VenueTrade) -> VenueMessage {
        startTrades()
        trades.append(trade)
        return message
    }
}
