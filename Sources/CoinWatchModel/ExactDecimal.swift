/// An exact decimal number: `mantissa × 10^(−scale)`.
///
/// Money in CoinWatch is never a binary floating-point number: `0.1 + 0.2` must
/// equal `0.3`, and a threshold of `64250.5` must compare equal to a price of
/// `64250.50`. Values are kept in canonical form (no trailing zeros in the
/// mantissa once `scale > 0`), so equal numbers have equal representations and
/// `Hashable` agrees with numeric equality.
public struct ExactDecimal: Sendable, Hashable {
    /// The most digits allowed after the decimal point.
    public static let maxScale = 18

    /// The signed digits.
    public let mantissa: Int64
    /// How many of the digits lie after the decimal point, `0...maxScale`.
    public let scale: Int

    public static let zero = ExactDecimal(canonicalMantissa: 0, scale: 0)

    /// Creates `mantissa × 10^(−scale)`, canonicalising trailing zeros away.
    ///
    /// Returns `nil` when `scale` is outside `0...maxScale`.
    public init?(mantissa: Int64, scale: Int) {
        guard (0...Self.maxScale).contains(scale) else { return nil }
        var m = mantissa
        var s = scale
        while s > 0, m % 10 == 0 {
            m /= 10
            s -= 1
        }
        self.init(canonicalMantissa: m, scale: s)
    }

    /// A whole number.
    public init(_ integer: Int64) {
        self.init(canonicalMantissa: integer, scale: 0)
    }

    private init(canonicalMantissa: Int64, scale: Int) {
        self.mantissa = canonicalMantissa
        self.scale = scale
    }

    public var isZero: Bool { mantissa == 0 }
    public var isNegative: Bool { mantissa < 0 }
}

extension ExactDecimal: Comparable {
    public static func < (lhs: ExactDecimal, rhs: ExactDecimal) -> Bool {
        let (l, r) = alignedMantissas(lhs, rhs)
        return l < r
    }

    /// Both mantissas at the larger scale. `Int128` holds any `Int64 × 10^18`
    /// (|value| < 9.3 × 10^36 < 1.7 × 10^38), so alignment never overflows.
    static func alignedMantissas(_ lhs: ExactDecimal, _ rhs: ExactDecimal) -> (Int128, Int128) {
        let scale = max(lhs.scale, rhs.scale)
        return (
            Int128(lhs.mantissa) * powerOfTen(scale - lhs.scale),
            Int128(rhs.mantissa) * powerOfTen(scale - rhs.scale)
        )
    }

    static func powerOfTen(_ exponent: Int) -> Int128 {
        var result: Int128 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }
}
