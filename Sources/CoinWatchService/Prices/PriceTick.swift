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

    public init(symbol: Symbol, price: ExactDecimal, timeMs: Int64) {
        self.symbol = symbol
        self.price = price
        self.timeMs = timeMs
    }

    public var description: String { "\(symbol) \(price) @\(timeMs)" }
}
