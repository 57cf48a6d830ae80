import CoinWatchCore
import Foundation
import Testing

@Suite("Base64 and base64url")
struct Base64Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648's test vectors, both ways")
    func rfcVectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(plain.utf8) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
            let unpadded = encoded.replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURL(plain.utf8) == unpadded)
            #expect(Base64.decodeURL(unpadded) == Array(plain.utf8))
        }
    }

    @Test("the two alphabets differ in + / and - _")
    func alphabets() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encodeURL(bytes) == "-_-_")
        #expect(Base64.decode("+/+/") == bytes)
        #expect(Base64.decodeURL("-_-_") == bytes)
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decodeURL("+/+/") == nil)
    }

    @Test("every length round-trips and matches Foundation's encoder")
    func roundTrips() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(Base64.decode(encoded) == bytes)
            #expect(Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
        }
    }

    @Test("only the canonical text decodes", arguments: [
        "Zg", "Zg=", "Zg===", "Z===", "Z", "Zh==", "Zm9=", "Zm9vY", " Zg==", "Zg==\n", "Zm9v\nYmFy", "Zg==Zg==",
        "=Zg=", "Zm-v", "Zm_v", "Zm9v!", "Ã©==",
    ])
    func strictStandard(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("base64url refuses padding, the other alphabet and stray bits", arguments: [
        "Zg==", "Zm8=", "Z", "Zh", "Zm9", "Zm+v", "Zm/v", "Zm9v ", "Zm9vY",
    ])
    func strictURL(text: String) {
        #expect(Base64.decodeURL(text) == nil)
    }

    @Test("the JSON mapping's reading: either alphabet, padded or not, still nothing else")
    func eitherAlphabet() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]   // "+/+/" in standard, "-_-_" in base64url
        #expect(Base64.decodeEitherAlphabet(Array("+/+/".utf8)) == bytes)
        #expect(Base64.decodeEitherAlphabet(Array("-_-_".utf8)) == bytes)
        #expect(Base64.decodeEitherAlphabet(Array("+_-/".utf8)) == bytes)
        #expect(Base64.decodeEitherAlphabet(Array("Zg==".utf8)) == [0x66])
        #expect(Base64.decodeEitherAlphabet(Array("Zg".utf8)) == [0x66])
        #expect(Base64.decodeEitherAlphabet(Array("".utf8)) == [])
        for bad in ["Zg=", "Zg===", "Z", "Zh", "Zm9v!", "Zg==Zg==", "=Zg=", " Zg"] {
            #expect(Base64.decodeEitherAlphabet(Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
