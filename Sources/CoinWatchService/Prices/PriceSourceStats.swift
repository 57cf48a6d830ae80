public import CoinWatchModel

/// A picture of one price source (a venue connection, the simulated market, a replay), taken at one moment.
///
/// Feeds fill it in; `Health/Check` reports it, and a metrics collector can export it: everything here is a
/// plain value, safe to hand to any thread.
public struct PriceSourceStats: Sendable, Hashable {
    /// `binance`, `coinbase`, `kraken`, `finnhub`, `sim`, `replay`.
    public var name: String
    /// Connected and subscribed (a venue), or running (sim, replay).
    public var isConnected = false
    /// Milliseconds since the last message of any kind (trade, heartbeat, pong); nil before the first.
    public var lastMessageAgeMs: Int64?
    /// Messages received in all (WebSocket messages for a venue, published batches otherwise).
    public var messages: UInt64 = 0
    /// Messages per second over about the last ten seconds.
    public var messagesPerSecond: ExactDecimal = .zero
    /// Prices taken from this source.
    public var prices: UInt64 = 0
    /// Connections made after the first.
    public var reconnects: UInt64 = 0
    /// Connection attempts that ended before the WebSocket upgrade finished: refused, a certificate that did not
    /// verify, a refused upgrade, a timeout.
    public var failedConnections: UInt64 = 0
    /// Times a numbered message was found missing (each jump counts once).
    public var gaps: UInt64 = 0
    /// Numbered messages missing in those gaps.
    public var missedMessages: UInt64 = 0
    /// Numbered messages seen before (dropped).
    public var duplicates: UInt64 = 0
    /// Numbered messages older than one already taken (dropped).
    public var outOfOrder: UInt64 = 0
    /// Messages that were not valid JSON or had a bad field.
    public var malformed: UInt64 = 0
    /// Messages of a kind the venue adapter does not know, and frames of a kind the venue does not send.
    public var unknown: UInt64 = 0
    /// Prices for an instrument that does not map to a symbol (a quote that does not count as USD).
    public var unmapped: UInt64 = 0
    /// Error events from the venue, and refused upgrades.
    public var venueErrors: UInt64 = 0
    /// Rate limits (HTTP 429 on the upgrade, a rate-limit error event).
    public var rateLimits: UInt64 = 0
    /// Why the last connection attempt or connection failed; empty if none did.
    public var lastError = ""

    public init(name: String) {
        self.name = name
    }

    /// Messages that could not be used.
    public var rejectedMessages: UInt64 { malformed + unknown + duplicates + outOfOrder + unmapped }
}
