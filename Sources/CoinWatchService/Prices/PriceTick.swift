public import CoinWatchModel

/// One observed price, as feeds produce it and the hub, the streams and the alert engine consume it.
///
/// Already validated: the symbol is canonical and the price is an exact decimal greater than zero, so code
/// downstream of the hub never re-checks wire input.
public struct PriceTick: Sendable, Hashable, CustomStringConvertible {
    /// The asset, e.g. `BTC`.
    public var symbol: Symbol
    /// The price, exact.
    public var price: ExactDecimal
    /// When the source observed the price, in milliseconds since the Unix epoch.
    public var timeMs: Int64
    /// How many sources the price is the median of; 0 when not counted (PublishPrices, prices restored at start).
    public var sources: UInt32
    /// The symbol has no fresh source: `price` is the last known one, kept for display, never a new observation.
    /// Only `PriceHub.markStale` makes such ticks; consumers of the full tick stream (the alert engine) see them so
    /// they know the next price follows a gap.
    public var isStale: Bool

    public init(symbol: Symbol, price: ExactDecimal, timeMs: Int64, sources: UInt32 = 0, isStale: Bool = false) {
        self.symbol = symbol
        self.price = price
        self.timeMs = timeMs
        self.sources = sources
        self.isStale = isStale
    }

    public var description: String {
        "\(symbol) \(price) @\(timeMs)\(sources > 0 ? " (\(sources) sources)" : "")\(isStale ? " stale" : "")"
    }
}
