import CoinWatchModel
import Testing

struct PushTokenTests {
    @Test func tokensAreStoredLowercase() throws {
        let token = try PushToken(validating: String(repeating: "aB", count: 32))
        #expect(token.rawValue == String(repeating: "ab", count: 32))
        #expect(try PushToken(validating: String(repeating: "0F", count: 100)).rawValue.count == 200)
        #expect(token.abbreviated == "abababab…abab")
    }

    @Test(arguments: [
        (String(repeating: "a", count: 62), "(got 62 characters)"),
        (String(repeating: "a", count: 202), "(got 202 characters)"),
        (String(repeating: "a", count: 65), "(got an odd count, 65)"),
        (String(repeating: "a", count: 63) + "g", "(found 'g')"),
        (String(repeating: "a", count: 63) + " ", "(found ' ')"),
        ("", "(got 0 characters)"),
    ])
    func badTokensNameTheRule(text: String, detail: String) {
        let error = #expect(throws: ValidationError.self) { try PushToken(validating: text) }
        #expect(error?.description == "apns_token: must be an even number of 64–200 hex digits \(detail)")
    }

    @Test func uuidsAreReadInAnyCaseAndSeparator() {
        #expect(HexText.canonicalUUID(Array("3F2504E0_4F89_11D3_9A0C_0305E82C3301".utf8))
            == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        #expect(HexText.canonicalUUID(Array("3f2504e0-4f89-11d3-9a0c-0305e82c330".utf8)) == nil)
        #expect(HexText.canonicalUUID(Array("3f2504e0-4f89-11d3-9a0c-0305e82c330g".utf8)) == nil)
        #expect(HexText.lowercaseDigit(UInt8(ascii: "F")) == UInt8(ascii: "f"))
        #expect(HexText.lowercaseDigit(UInt8(ascii: "g")) == nil)
    }
}
