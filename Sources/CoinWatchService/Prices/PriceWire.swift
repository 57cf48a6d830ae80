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
