import CoinWatchCore
public import CoinWatchModel
public import CoinWatchProto

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

extension PriceTick {
    /// The tick as the wire and the store carry it (`coinwatch.v1.Tick`).
    public var message: V1.Tick { PriceWire.tick(self) }

    /// A tick from outside (the wire, the price bus), checked as `PublishPrices` checks one; a `time_ms` of 0
    /// becomes now. `field` names it in errors.
    public init(validating message: V1.Tick, field: String) throws(ValidationError) {
        self = try PriceWire.priceTick(message, field: field, nowMs: WallClock.milliseconds())
    }

    /// The whole tick, stale flag and source count included, as the cluster's price bus carries it between nodes:
    /// a `PriceUpdate` without a stream position. Its first three fields are `Tick`'s, so either decodes as the
    /// other.
    public var update: V1.PriceUpdate { PriceWire.update(self) }

    /// A tick from the price bus, checked as `init(validating:field:)` checks a `Tick`.
    public init(validating update: V1.PriceUpdate, field: String) throws(ValidationError) {
        self = try PriceWire.priceTick(update, field: field, nowMs: WallClock.milliseconds())
    }
}

/// Where a hub in cluster mode sends what is published on this node: the price bus, which hands every tick back to
/// every node's hub (`PriceHub.deliver`). Called on the publishing thread (a feed's, or the event loop that ran
/// `PublishPrices`): it must only queue the ticks, never wait for the network.
public protocol PriceUpstream: Sendable {
    func publish(_ ticks: [PriceTick])
}
