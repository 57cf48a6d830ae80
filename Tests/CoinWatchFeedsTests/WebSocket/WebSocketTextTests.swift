import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct WebSocketTextTests {
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { WebSocketText.isUTF8($0) }
    }

    /// The check takes exactly what `String(validating:)`, which it replaced, takes.
    @Test func takesWhatAStringTakes() {
        var cases: [[UInt8]] = [
            [], Array("{\"type\":\"ping\"}".utf8), Array("prix: 64 250,50 €, 😀".utf8), [0x00], [0x7F], [0x80],
            [0xC0, 0x80], [0xC2, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF0, 0x9F, 0x98], Array("abcdefgh".utf8) + [0xFF] + Array("abcdefgh".utf8),
        ]
        var random = SplitMix64(seed: 3)
        let pieces: [[UInt8]] = [
            Array("abcdefghij".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0x80], [0xBF], [0xC3],
            [0xE2, 0x82], [0xF0], [0xF8], [0xFE], [0xED, 0xB0, 0x80], [0xC1, 0xBF], [0x00],
        ]
        for _ in 0..<5000 {
            cases.append((0..<Int.random(in: 0...8, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! })
        }
        for bytes in cases {
            #expect(Self.isUTF8(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
    }
}
