import CoinWatchModel
import Testing

@Suite("ExactDecimal arithmetic")
struct ExactDecimalArithmeticTests {
    private func d(_ text: String) throws -> ExactDecimal { try ExactDecimal(parsing: text) }

    @Test("sums and differences are exact across scales", arguments: [
        ("0.1", "0.2", "0.3", "-0.1"),
        ("64250.5", "0.25", "64250.75", "64250.25"),
        ("1", "-1", "0", "2"),
        ("0.000000000000000001", "1", "1.000000000000000001", "-0.999999999999999999"),
        ("9223372036854775806", "1", "9223372036854775807", "9223372036854775805"),
        ("2.5", "2.5", "5", "0"),
    ])
    func sums(lhs: String, rhs: String, sum: String, difference: String) throws {
        let a = try d(lhs)
        let b = try d(rhs)
        #expect(try a.adding(b) == d(sum))
        #expect(try a.adding(b).description == sum)
        #expect(try a.subtracting(b) == d(difference))
        #expect(try b.adding(a) == a.adding(b))
    }

    @Test("results are canonical: trailing zeros are dropped")
    func canonical() throws {
        let sum = try d("0.15").adding(d("0.05"))
        #expect(sum.mantissa == 2)
        #expect(sum.scale == 1)
        let product = try d("2.5").multiplied(by: d("0.4"), rounding: .toNearestOrEven)
        #expect(product.mantissa == 1)
        #expect(product.scale == 0)
    }

    @Test("overflow is reported, never trapped", arguments: [
        ("9223372036854775807", "1"),
        ("-9223372036854775808", "-1"),
        ("922337203685477580.7", "0.1"),
        ("10", "0.000000000000000001"),
    ])
    func sumOverflow(lhs: String, rhs: String) throws {
        let error = try #require(throws: DecimalArithmeticError.self) { try d(lhs).adding(d(rhs)) }
        #expect(error.code == .overflow)
        #expect(error.message.contains(lhs))
    }

    @Test("a sum needing all 19 digits still fits")
    func nineteenDigits() throws {
        #expect(try d("1").adding(d("0.000000000000000001")) == d("1.000000000000000001"))
        #expect(try d("9223372036854775807").subtracting(d("9223372036854775807")) == .zero)
    }

    @Test("negation is exact except for the smallest mantissa")
    func negation() throws {
        #expect(try d("64250.5").negated() == d("-64250.5"))
        #expect(try ExactDecimal.zero.negated() == .zero)
        let smallest = try #require(ExactDecimal(mantissa: Int64.min, scale: 3))
        #expect(throws: DecimalArithmeticError.self) { try smallest.negated() }
        #expect(throws: DecimalArithmeticError.self) { try d("0").subtracting(smallest) }
    }

    @Test("exact products are kept exactly", arguments: [
        ("64250.5", "0.995", "63929.2475"),
        ("100", "1.005", "100.5"),
        ("-3", "0.5", "-1.5"),
        ("0.000000001", "0.000000001", "0.000000000000000001"),
        ("3037000499", "3037000499", "9223372030926249001"),
    ])
    func exactProducts(lhs: String, rhs: String, product: String) throws {
        for rule: FloatingPointRoundingRule in [.down, .up, .towardZero, .awayFromZero, .toNearestOrEven] {
            #expect(try d(lhs).multiplied(by: d(rhs), rounding: rule) == d(product))
        }
    }

    /// (value, factor, rule, expected): products with more than 18 fractional digits or more than
    /// 19 significant digits, rounded by each rule.
    @Test("inexact products round by the rule given", arguments: [
        // 1.000000000000000001 × 0.995 = 0.995000000000000000995 (21 decimals → 18)
        ("1.000000000000000001", "0.995", FloatingPointRoundingRule.down, "0.995"),
        ("1.000000000000000001", "0.995", .up, "0.995000000000000001"),
        ("1.000000000000000001", "0.995", .towardZero, "0.995"),
        ("1.000000000000000001", "0.995", .awayFromZero, "0.995000000000000001"),
        ("1.000000000000000001", "0.995", .toNearestOrEven, "0.995000000000000001"),
        ("-1.000000000000000001", "0.995", .down, "-0.995000000000000001"),
        ("-1.000000000000000001", "0.995", .up, "-0.995"),
        ("-1.000000000000000001", "0.995", .towardZero, "-0.995"),
        ("-1.000000000000000001", "0.995", .awayFromZero, "-0.995000000000000001"),
        // ties: 0.000000000000000001 × 0.5 = 0.0000000000000000005
        ("0.000000000000000001", "0.5", .toNearestOrEven, "0"),
        ("0.000000000000000001", "0.5", .toNearestOrAwayFromZero, "0.000000000000000001"),
        ("0.000000000000000003", "0.5", .toNearestOrEven, "0.000000000000000002"),
        ("-0.000000000000000003", "0.5", .toNearestOrEven, "-0.000000000000000002"),
        ("-0.000000000000000001", "0.5", .toNearestOrAwayFromZero, "-0.000000000000000001"),
        // more than 19 digits: 9223372036854775807 × 0.995 = 9177255176670501927.965
        ("9223372036854775807", "0.995", .down, "9177255176670501927"),
        ("9223372036854775807", "0.995", .up, "9177255176670501928"),
        ("9223372036854775807", "0.995", .toNearestOrEven, "9177255176670501928"),
        // 92233720368547758.07 × 1.005 = 92694888970390496.86035: only one decimal fits
        ("92233720368547758.07", "1.005", .down, "92694888970390496.8"),
        ("92233720368547758.07", "1.005", .up, "92694888970390496.9"),
    ])
    func rounding(lhs: String, rhs: String, rule: FloatingPointRoundingRule, expected: String) throws {
        #expect(try d(lhs).multiplied(by: d(rhs), rounding: rule) == d(expected))
    }

    @Test("a product whose integer part does not fit is an overflow")
    func productOverflow() throws {
        let error = try #require(throws: DecimalArithmeticError.self) {
            try d("9223372036854775807").multiplied(by: d("1.005"), rounding: .down)
        }
        #expect(error.code == .overflow)
        #expect(throws: DecimalArithmeticError.self) {
            try d("4000000000").multiplied(by: d("-4000000000"), rounding: .down)
        }
    }

    /// Rounding `.down` must give the largest representable value not above the exact product (and
    /// `.up` the smallest not below), so `x ≤ product ⇔ x ≤ rounded` for every x at the result's
    /// scale. Checked against Int128 math on seeded random operands.
    @Test("down and up bracket the exact product within one unit", arguments: [1, 2, 3] as [UInt64])
    func bracketing(seed: UInt64) throws {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int64) -> Int64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64(truncatingIfNeeded: state) % bound
        }
        for _ in 0..<500 {
            let a = try #require(ExactDecimal(mantissa: next(10_000_000_000), scale: Int(next(19).magnitude)))
            let b = try #require(ExactDecimal(mantissa: next(1_000_000), scale: Int(next(19).magnitude)))
            let down = try a.multiplied(by: b, rounding: .down)
            let up = try a.multiplied(by: b, rounding: .up)
            // The exact product, and both results, at the exact product's scale.
            let scale = a.scale + b.scale
            let exact = Int128(a.mantissa) * Int128(b.mantissa)
            let downScaled = Int128(down.mantissa) * pow10(scale - down.scale)
            let upScaled = Int128(up.mantissa) * pow10(scale - up.scale)
            #expect(downScaled <= exact)
            #expect(upScaled >= exact)
            #expect(upScaled - downScaled <= (scale > 18 ? pow10(scale - 18) : 0))
        }
    }

    private func pow10(_ exponent: Int) -> Int128 {
        var value: Int128 = 1
        for _ in 0..<exponent { value *= 10 }
        return value
    }
}
