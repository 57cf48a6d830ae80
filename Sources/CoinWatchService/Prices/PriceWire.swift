import CoinWatchModel
import CoinWatchProto

/// The hub's ticks to and from their wire messages, with the checks a tick from outside must pass.
///
/// Kept in one place so PublishPrices, the persisted last prices and GetPrices apply the same rules. The decimal
/// conversion itself is `ExactDecimal(validating:field:)` and `V1.Decimal(_:)`; the clocks are `WallClock` and
/// `MonotonicClock`.
enum PriceWire {
    static func tick(_ tick: PriceTick) -> V1.Tick {
        V1.Tick(symbol: tick.symbol.rawValue, price: V1.Decimal(tick.price), timeMs: tick.timeMs)
    }

    /// Validates a tick from the wire; `field` names it in errors (`ticks[3]`). A `time_ms` of 0 becomes `nowMs`.
    static func priceTick(_ tick: V1.Tick, field: String, nowMs: Int64) throws(ValidationError) -> PriceTick {
        let symbol = try Symbol(validating: tick.symbol, field: "\(field).symbol")
        let price = try positivePrice(tick.price, field: "\(field).price")
        guard tick.timeMs >= 0 else {
            throw ValidationError(
                field: "\(field).time_ms",
                rule: "must be milliseconds since the Unix epoch, or 0 for now (got \(tick.timeMs))")
        }
        return PriceTick(symbol: symbol, price: price, timeMs: tick.timeMs == 0 ? nowMs : tick.timeMs)
    }

    static func update(_ tick: PriceTick) -> V1.PriceUpdate {
        V1.PriceUpdate(
            symbol: tick.symbol.rawValue, price: V1.Decimal(tick.price), sourceTimeMs: tick.timeMs, stale: tick.isStale,
            sources: tick.sources)
    }

    /// Validates a whole tick (`update`) as `priceTick(_:field:nowMs:)` validates a `Tick`, keeping its stale flag
    /// and source count; a stream position or snapshot marks in it mean nothing here and are ignored.
    static func priceTick(_ update: V1.PriceUpdate, field: String, nowMs: Int64) throws(ValidationError) -> PriceTick {
        var tick = try priceTick(
            V1.Tick(symbol: update.symbol, price: update.price, timeMs: update.sourceTimeMs), field: field, nowMs: nowMs)
        tick.sources = update.sources
        tick.isStale = update.stale
        return tick
    }

    /// A price must be present, at most 18 digits after the point, and greater than zero.
    static func positivePrice(_ decimal: V1.Decimal?, field: String) throws(ValidationError) -> ExactDecimal {
        guard let decimal else {
            throw ValidationError(field: field, rule: "is required")
        }
        let value = try ExactDecimal(validating: decimal, field: field)
        guard value > .zero else {
            throw ValidationError(field: field, rule: "must be greater than 0 (got \(value))")
        }
        return value
    }
}
