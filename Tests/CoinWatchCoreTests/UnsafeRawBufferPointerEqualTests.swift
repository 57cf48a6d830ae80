import CoinWatchCore
import Testing

/// Byte equality by words: the same answer as comparing byte by byte, at every length and every place.
@Suite struct UnsafeRawBufferPointerEqualTests {
    @Test("equal buffers are equal; one changed byte anywhere, or another length, is not")
    func agreesWithBytewiseComparison() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let same = bytes
            bytes.withUnsafeBytes { lhs in
                same.withUnsafeBytes { rhs in #expect(lhs.hasSameBytes(as: rhs)) }
                (bytes + [0]).withUnsafeBytes { longer in #expect(!lhs.hasSameBytes(as: longer)) }
            }
            for place in 0..<length {
                var changed = bytes
                changed[place] ^= 0x01
                let equal = bytes.withUnsafeBytes { lhs in changed.withUnsafeBytes { lhs.hasSameBytes(as: $0) } }
                #expect(!equal, "length \(length), byte \(place)")
            }
        }
    }
}
