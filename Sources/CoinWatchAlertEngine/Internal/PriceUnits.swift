import CoinWatchModel

/// Prices and thresholds as whole multiples of 10^−18, the finest step an ``ExactDecimal`` can take.
///
/// Every `ExactDecimal` maps exactly and in order onto these units (|mantissa| × 10^18 < 9.3 × 10^36 <
/// Int128.max), so the index compares plain `Int128`s instead of re-aligning scales on every step of
/// every search, and a re-arm boundary rounded to a unit is exact for every price the feed can send:
/// no price lies strictly between two adjacent units.
enum PriceUnits {
    /// 10^0 … 10^18.
    static let powersOfTen: [Int128] = {
        var powers: [Int128] = [1]
        for _ in 0..<ExactDecimal.maxScale { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    static func units(_ value: ExactDecimal) -> Int128 {
        Int128(value.mantissa) * powersOfTen[ExactDecimal.maxScale - value.scale]
    }
}

/// Multiplication of a unit count by a positive decimal factor, rounded toward −∞.
///
/// Used for hysteresis boundaries: `threshold × (1 − h)` for `above`, and, on the mirrored axis the
/// `below` side works on, `−threshold × (1 + h)`. Rounding down on that axis is a floor for `above`
/// and a ceiling for `below`, which is exactly what makes `price ≤ boundary` (or `≥`) exact.
struct UnitFactor: Hashable {
    /// The factor is `numerator / denominator`.
    let numerator: Int128
    /// A power of ten.
    let denominator: Int128

    init(numerator: Int128, denominator: Int128) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// ⌊units × factor⌋.
    func floorProduct(_ units: Int128) -> Int128 {
        let (product, overflow) = units.multipliedReportingOverflow(by: numerator)
        if !overflow {
            return Self.floorDivide(product, denominator)
        }
        // Rare: a huge threshold, or a factor with many decimals. The 256-bit product
        // divided back by the denominator is |units × factor| < 9.3 × 10^36 × 2, inside Int128,
        // because factors are 1 ± h with 0 ≤ h < 1 (enforced by `AlertEngine.Configuration`).
        let wide = units.multipliedFullWidth(by: numerator)
        let (quotient, remainder) = denominator.dividingFullWidth(wide)
        return remainder < 0 ? quotient - 1 : quotient
    }

    static func floorDivide(_ value: Int128, _ divisor: Int128) -> Int128 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
