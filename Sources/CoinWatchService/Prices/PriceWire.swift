import CoinWatchModel
import CoinWatchProto

/// Conversions between the hub's validated values and their wire messages, and the checks on wire ticks.
///
/// Kept in one place so PublishPrices, the persisted last prices and GetPrices apply the same rules.
enum PriceWire {
    /// Largest scale a wire price may carry, as `coinwatch.proto` documents.
    static let maxScale = UInt32(ExactDecimal.maxScale)

    static func decimal(_ value: ExactDecimal) -> V1.Decimal {
        V1.Decimal(mantissa: value.mantissa, scale: UInt32(value.scale))
    }

    static func tick(_ tick: PriceTick) -> V1.Tick {
        V1.Tick(symbol: tick.symbol.rawValue, price: decimal(tick.price), timeMs: tick.timeMs)
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
        guard decimal.scale <= maxScale,
              let value = ExactDecimal(mantissa: decimal.mantissa, scale: Int(decimal.scale))
        else {
            throw ValidationError(field: field, rule: "scale must be 0–\(maxScale) (got \(decimal.scale))")
        }
        guard value > .zero else {
            throw ValidationError(field: field, rule: "must be greater than 0 (got \(value))")
        }
        return value
    }
}
