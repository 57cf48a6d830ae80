public import CoinWatchCore

/// Exact sums, differences and products of decimals.
///
/// Money arithmetic must never lose a digit without saying so. Sums and differences are exact or
/// throw ``DecimalArithmeticError/Code/overflow``; there is no trapping `+` because a price feed must
/// not be able to crash the server. A product of two decimals can need up to 36 fractional digits, so
/// ``multiplied(by:rounding:)`` keeps every digit that fits and rounds the rest by a rule the caller
/// names: a hysteresis boundary rounded the wrong way would re-arm an alert one unit too early.
extension ExactDecimal {
    /// `self + other`, exactly.
    ///
    /// - Throws: `overflow` when the exact sum does not fit in an `Int64` mantissa at the larger of
    ///   the two scales (after trailing zeros are dropped).
    public func adding(_ other: ExactDecimal) throws(DecimalArithmeticError) -> ExactDecimal {
        let (l, r) = Self.alignedMantissas(self, other)
        // Each aligned mantissa is below 9.3 × 10^36, so the Int128 sum (< 1.9 × 10^37) cannot overflow.
        return try Self.exactly(l + r, scale: max(scale, other.scale), operation: "\(self) + \(other)")
    }

    /// `self − other`, exactly.
    ///
    /// - Throws: `overflow` when the exact difference does not fit (see ``adding(_:)``).
    public func subtracting(_ other: ExactDecimal) throws(DecimalArithmeticError) -> ExactDecimal {
        let (l, r) = Self.alignedMantissas(self, other)
        return try Self.exactly(l - r, scale: max(scale, other.scale), operation: "\(self) - \(other)")
    }

    /// `−self`, exactly.
    ///
    /// - Throws: `overflow` for the one value whose negation has no `Int64` mantissa,
    ///   `Int64.min × 10^(−scale)`.
    public func negated() throws(DecimalArithmeticError) -> ExactDecimal {
        try Self.exactly(-Int128(mantissa), scale: scale, operation: "-(\(self))")
    }

    /// `self × factor`, rounded to the finest scale (at most ``maxScale``) whose mantissa fits.
    ///
    /// The exact product is kept when it has at most 18 fractional digits and fits an `Int64`
    /// mantissa. Otherwise fractional digits are dropped one at a time, from the right, until the
    /// value fits, and the dropped digits are rounded by `rule`:
    ///
    /// - `.down` / `.up`: toward −∞ / +∞ (floor / ceiling);
    /// - `.towardZero` / `.awayFromZero`: truncation / away from zero;
    /// - `.toNearestOrEven` / `.toNearestOrAwayFromZero`: nearest, ties to even / away from zero.
    ///
    /// `.down` gives the largest representable value not above the exact product, so for any `x`
    /// with at most as many fractional digits as the result, `x ≤ product` exactly when
    /// `x ≤ result`; `.up` gives the mirror guarantee for `≥`.
    ///
    /// - Throws: `overflow` when even the integer part of the product does not fit in an `Int64`.
    public func multiplied(
        by factor: ExactDecimal,
        rounding rule: FloatingPointRoundingRule
    ) throws(DecimalArithmeticError) -> ExactDecimal {
        // |Int64 × Int64| ≤ 2^126 < Int128.max, and scale + scale ≤ 36 keeps 10^scale within Int128.
        let product = Int128(mantissa) * Int128(factor.mantissa)
        var value = product
        var productScale = scale + factor.scale
        while productScale > 0, value % 10 == 0 {
            value /= 10
            productScale -= 1
        }
        let minimumDrop = max(0, productScale - Self.maxScale)
        for drop in minimumDrop...productScale {
            let rounded = Self.divide(value, byPowerOfTen: drop, rule: rule)
            if let narrow = Int64(exactly: rounded),
               let result = ExactDecimal(mantissa: narrow, scale: productScale - drop) {
                return result
            }
        }
        throw DecimalArithmeticError(
            code: .overflow,
            message: "\(self) × \(factor) has more than 19 integer digits"
        )
    }

    /// `value × 10^(−scale)` when it fits without rounding.
    static func exactly(_ value: Int128, scale: Int, operation: String) throws(DecimalArithmeticError) -> ExactDecimal {
        var value = value
        var scale = scale
        while scale > 0, value % 10 == 0 {
            value /= 10
            scale -= 1
        }
        guard let narrow = Int64(exactly: value), let result = ExactDecimal(mantissa: narrow, scale: scale) else {
            throw DecimalArithmeticError(code: .overflow, message: "\(operation) does not fit in 19 significant digits")
        }
        return result
    }

    /// `value / 10^exponent`, rounded by `rule`. `exponent` is at most 36, so the divisor fits in
    /// Int128, and the remainder is below it, so doubling the remainder cannot overflow either.
    static func divide(_ value: Int128, byPowerOfTen exponent: Int, rule: FloatingPointRoundingRule) -> Int128 {
        guard exponent > 0 else { return value }
        let divisor = powerOfTen(exponent)
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        guard remainder != 0 else { return quotient }
        // Truncation went toward zero; `away` is one step further from zero, on the side of the sign.
        let away: Int128 = value < 0 ? quotient - 1 : quotient + 1
        let twiceRemainder = remainder.magnitude * 2
        switch rule {
        case .towardZero:
            return quotient
        case .awayFromZero:
            return away
        case .down:
            return value < 0 ? away : quotient
        case .up:
            return value < 0 ? quotient : away
        case .toNearestOrAwayFromZero:
            return twiceRemainder >= divisor.magnitude ? away : quotient
        case .toNearestOrEven:
            if twiceRemainder > divisor.magnitude { return away }
            if twiceRemainder < divisor.magnitude { return quotient }
            return quotient % 2 == 0 ? quotient : away
        @unknown default:
            return value < 0 ? away : quotient
        }
    }
}

/// Why an arithmetic operation on ``ExactDecimal`` has no result.
public struct DecimalArithmeticError: CoinWatchError {
    /// What kind of failure this is; new kinds may be added, so switch with a default.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The exact result needs more than the 19 significant digits of an `Int64` mantissa.
        public static let overflow = Code("overflow")
    }

    public let code: Code
    /// The operation and operands, for a log line or an error reply.
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
