public import CoinWatchProto

/// The one conversion between exact decimals and the wire's `Decimal`.
extension ExactDecimal {
    /// The wire value as an exact decimal; `nil` when its scale is outside 0...18.
    public init?(_ wire: V1.Decimal) {
        guard wire.scale <= UInt32(ExactDecimal.maxScale) else { return nil }
        self.init(mantissa: wire.mantissa, scale: Int(wire.scale))
    }
}

extension V1.Decimal {
    /// The canonical wire form (no trailing zeros).
    public init(_ value: ExactDecimal) {
        self.init(mantissa: value.mantissa, scale: UInt32(value.scale))
    }
}
