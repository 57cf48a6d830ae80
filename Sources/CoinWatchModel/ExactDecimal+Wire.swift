public import CoinWatchProto

/// The conversion between exact decimals and the wire's `Decimal` (`mantissa × 10^−scale`): every request, response,
/// stored price and alert goes through these, so the scale rule and its error are the same everywhere.
extension ExactDecimal {
    /// The wire value as an exact decimal; `nil` when its scale is outside 0...18.
    public init?(_ wire: V1.Decimal) {
        guard wire.scale <= UInt32(ExactDecimal.maxScale) else { return nil }
        self.init(mantissa: wire.mantissa, scale: Int(wire.scale))
    }

    /// The wire value as an exact decimal, or the error for the request field `field` (`ticks[3].price`) when its
    /// scale is outside 0...18.
    public init(validating wire: V1.Decimal, field: @autoclosure () -> String) throws(ValidationError) {
        guard let value = ExactDecimal(wire) else {
            throw ValidationError(field: field(), rule: "scale must be 0–\(ExactDecimal.maxScale) (got \(wire.scale))")
        }
        self = value
    }
}

extension V1.Decimal {
    /// The canonical wire form (no trailing zeros).
    public init(_ value: ExactDecimal) {
        self.init(mantissa: value.mantissa, scale: UInt32(value.scale))
    }
}
