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

    @Test("a string has the same UTF-8 as its own bytes, and not as other bytes, whether small, large or a literal")
    func stringAgainstBytes() {
        for text in ["", "te", "application/grpc", "/coinwatch.v1.CoinWatch/GetSettings", "caf\u{E9}", String(repeating: "x", count: 100)] {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { #expect(text.hasSameUTF8(as: $0), "\(text)") }
            (bytes + [0x61]).withUnsafeBytes { #expect(!text.hasSameUTF8(as: $0), "\(text)") }
            if !bytes.isEmpty {
                Array(bytes.dropLast()).withUnsafeBytes { #expect(!text.hasSameUTF8(as: $0), "\(text)") }
            }
        }
        // A string made from bytes that are not UTF-8 holds their repair, which is not the same bytes.
        let invalid: [UInt8] = [0x61, 0xFF]
        invalid.withUnsafeBytes { #expect(!String(decoding: $0, as: UTF8.self).hasSameUTF8(as: $0)) }
    }
}
