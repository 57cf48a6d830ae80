import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct TradeNumberTests {
    static func integer<T: FixedWidthInteger>(_ text: String, as type: T.Type) -> T? {
        Array(text.utf8).withUnsafeBytes { TradeNumber.integer($0, as: type) }
    }

    @Test func wholeNumbersReadAsTheStandardLibraryReadsThem() {
        var cases = [
            "", "+", "-", "0", "-0", "+5", "-5", "00012", "1.0", "1e3", " 1", "1 ", "+-1", "٣",
            "18446744073709551615", "18446744073709551616", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809",
        ]
        var random = SplitMix64(seed: 12)
        let alphabet = Array("0123456789+-.e ")
        for _ in 0..<2000 {
            cases.append(String((0..<Int.random(in: 0...22, using: &random)).map { _ in alphabet.randomElement(using: &random)! }))
        }
        for text in cases {
            #expect(Self.integer(text, as: UInt64.self) == UInt64(text), "\(text)")
            #expect(Self.integer(text, as: Int64.self) == Int64(text), "\(text)")
            #expect(Self.integer(text, as: Int.self) == Int(text), "\(text)")
        }
    }

    @Test func decimalsFromBytesAndFromTextAgree() throws {
        for text in ["64250.50", "6.42505e4", "1E-18", "-3", "abc", "1e", "1e-19", "9e18", "1.2.3", "", "+0.5"] {
            let fromText = Result { () throws(DecimalParseError) in try TradeNumber.exactDecimal(text[...]) }
            let fromBytes = Array(text.utf8).withUnsafeBytes { raw in
                Result { () throws(DecimalParseError) in try TradeNumber.exactDecimal(raw) }
            }
            let plain = Result { () throws(DecimalParseError) in try ExactDecimal(parsing: text) }
            #expect(fromText == fromBytes, "\(text)")
            if !text.contains("e") && !text.contains("E") {
                #expect(plain == fromBytes, "\(text)")
            }
        }
    }

    @Test func anExponentWithoutAPositiveCounterpartIsRefused() {
        let error = #expect(throws: DecimalParseError.self) { try TradeNumber.exactDecimal("1e-9223372036854775808") }
        #expect(error?.reason == "the exponent is not a small whole number")
        #expect(error?.text == "1e-9223372036854775808")
    }
}
