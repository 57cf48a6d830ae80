import CoinWatchModel
import Testing

@Suite("ExactDecimal")
struct ExactDecimalTests {
    @Test("parses and prints exactly", arguments: [
        ("64250.5", "64250.5"), ("64250.50", "64250.5"), ("-0.001", "-0.001"), ("+7", "7"),
        ("0", "0"), ("0.000", "0"), (".5", "0.5"), ("5.", "5"), ("0.000000000000000001", "0.000000000000000001"),
        ("9223372036854775807", "9223372036854775807"), ("-9223372036854775808", "-9223372036854775808"),
    ])
    func roundTrip(input: String, printed: String) throws {
        let value = try ExactDecimal(parsing: input)
        #expect(value.description == printed)
        #expect(ExactDecimal(value.description) == value)
    }

    @Test("refuses what is not a plain decimal", arguments: [
        "", "-", ".", "1e3", "1,000", "nan", "inf", "1.2.3", "0x10", " 1", "9223372036854775808",
        "0.0000000000000000001",
    ])
    func refuses(input: String) {
        #expect(throws: DecimalParseError.self) { try ExactDecimal(parsing: input) }
        #expect(ExactDecimal(input) == nil)
    }

    @Test("0.1 + 0.2 style values compare exactly across scales")
    func comparison() throws {
        let a = try ExactDecimal(parsing: "64250.5")
        let b = try #require(ExactDecimal(mantissa: 6_425_050, scale: 2))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(try ExactDecimal(parsing: "0.3") > ExactDecimal(parsing: "0.29999999999999999"))
        #expect(try ExactDecimal(parsing: "-1") < ExactDecimal(parsing: "-0.5"))
        #expect(ExactDecimal(Int64.max) > ExactDecimal(mantissa: Int64.max, scale: 18)!)
        #expect(ExactDecimal(Int64.min) < ExactDecimal(mantissa: Int64.min, scale: 18)!)
    }

    @Test("scale outside 0...18 is refused")
    func scaleRange() {
        #expect(ExactDecimal(mantissa: 1, scale: 19) == nil)
        #expect(ExactDecimal(mantissa: 1, scale: -1) == nil)
        #expect(ExactDecimal(mantissa: 1_000, scale: 18)?.scale == 15)
    }
}
