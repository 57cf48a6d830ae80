import CoinWatchModel

/// The change of a price since a reference price, exactly: the difference as a decimal and the
/// percentage rounded to two places (half away from zero), never through a float.
struct PriceChange: Sendable, Hashable {
    enum Direction: Sendable, Hashable {
        case up, down, flat
    }

    let direction: Direction
    /// `last − first`, exactly; nil if it does not fit a decimal.
    let difference: ExactDecimal?
    /// The percentage in hundredths of a percent (`12` = 0.12%); nil when `first` is zero or the
    /// result does not fit.
    let basisPoints: Int128?

    init(from first: ExactDecimal, to last: ExactDecimal) {
        direction = last > first ? .up : last < first ? .down : .flat
        difference = try? last.subtracting(first)
        let scale = max(first.scale, last.scale)
        let f = Int128(first.mantissa) * Self.power(scale - first.scale)
        let l = Int128(last.mantissa) * Self.power(scale - last.scale)
        let d = l - f
        guard f != 0 else {
            basisPoints = nil
            return
        }
        // d × 10⁴ / f: the ratio in hundredths of a percent. |d| < 1.9 × 10^37, so × 10⁴ may overflow Int128;
        // such a change (beyond 10^30 %) is reported as unknown rather than wrapped.
        let (numerator, overflow) = d.multipliedReportingOverflow(by: 10_000)
        guard !overflow else {
            basisPoints = nil
            return
        }
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: f)
        if remainder.magnitude * 2 >= f.magnitude {
            basisPoints = (numerator < 0) != (f < 0) ? quotient - 1 : quotient + 1
        } else {
            basisPoints = quotient
        }
    }

    /// `+0.12%`, `-1.50%`, `0.00%`; `—` when unknown.
    var percentText: String {
        guard let basisPoints else { return "—" }
        let sign = basisPoints > 0 ? "+" : basisPoints < 0 ? "-" : ""
        let magnitude = basisPoints.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)%"
    }

    /// `+75.5`, `-0.25`, `0`.
    var differenceText: String {
        guard let difference else { return "—" }
        return difference.isNegative || difference.isZero ? difference.description : "+" + difference.description
    }

    /// ▲, ▼ or a blank for no change.
    var arrow: String {
        switch direction {
        case .up: "▲"
        case .down: "▼"
        case .flat: " "
        }
    }

    private static func power(_ exponent: Int) -> Int128 {
        var result: Int128 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }
}
