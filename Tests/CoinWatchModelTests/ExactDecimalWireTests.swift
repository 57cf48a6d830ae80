import CoinWatchModel
import CoinWatchProto
import Testing

@Suite("ExactDecimal on the wire")
struct ExactDecimalWireTests {
    @Test("a wire decimal converts to the same value and back in canonical form")
    func roundTrip() throws {
        let wire = V1.Decimal(mantissa: 6_425_050, scale: 2)
        let value = try ExactDecimal(validating: wire, field: "price")
        #expect(value == ExactDecimal("64250.5"))
        #expect(ExactDecimal(wire) == value)
        #expect(V1.Decimal(value) == V1.Decimal(mantissa: 642_505, scale: 1))
    }

    @Test("a scale outside 0...18 is refused, naming the field")
    func scaleOutOfRange() {
        let wire = V1.Decimal(mantissa: 5, scale: 19)
        #expect(ExactDecimal(wire) == nil)
        #expect(throws: ValidationError(field: "ticks[0].price", rule: "scale must be 0–18 (got 19)")) {
            try ExactDecimal(validating: wire, field: "ticks[0].price")
        }
    }
}
