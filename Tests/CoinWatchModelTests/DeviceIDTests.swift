import CoinWatchModel
import Testing

@Suite("DeviceID")
struct DeviceIDTests {
    @Test("UUIDs in any case and with - or _ name one device", arguments: [
        "3f2504e0_4f89_11d3_9a0c_0305e82c3301",
        "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
        "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        "3F2504E0_4f89-11D3_9a0c-0305E82C3301",
    ])
    func uuidNormalisation(text: String) throws {
        #expect(try DeviceID(validating: text).rawValue == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    }

    @Test("other ids are kept verbatim")
    func verbatim() throws {
        #expect(try DeviceID(validating: "Phone.7:a-b_c").rawValue == "Phone.7:a-b_c")
        #expect(try DeviceID(validating: String(repeating: "x", count: 128)).rawValue.count == 128)
    }

    @Test("invalid ids name the field and the rule", arguments: [
        "", String(repeating: "x", count: 129), "a b", "dev/1", "é", "a\u{0}b",
    ])
    func invalid(text: String) throws {
        let error = try #require(throws: ValidationError.self) { try DeviceID(validating: text) }
        #expect(error.field == "device_id")
        #expect(error.description.hasPrefix("device_id: must be 1–128 characters of A-Z a-z 0-9 . _ : -"))
    }
}

@Suite("DeviceID.isCanonical")
struct DeviceIDCanonicalTests {
    /// What `isCanonical` must say: the id validates and is kept as it is.
    static func expected(_ text: String) -> Bool {
        (try? DeviceID(validating: text))?.rawValue == text
    }

    static func isCanonical(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { DeviceID.isCanonical(utf8: $0) }
    }

    @Test("agrees with validation on UUID forms, near-UUIDs, verbatim and invalid ids", arguments: [
        "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
        "3f2504e0_4f89_11d3_9a0c_0305e82c3301", "3f2504e0-4f89-11d3-9a0c-0305e82c330g",
        "3f2504e0-4f89-11d3-9a0c:0305e82c3301", "3f2504e0-4f89-11d3-9a0c-0305e82c33011", "phone-1", "Phone.7:a-b_c",
        String(repeating: "x", count: 128), String(repeating: "x", count: 129), String(repeating: "A", count: 36),
        "", "a b", "dev/1", "é", "a\u{0}b",
    ])
    func agrees(text: String) {
        #expect(Self.isCanonical(text) == Self.expected(text), "\(text)")
    }

    @Test("agrees with validation on 20,000 random 36-byte ids drawn from UUID characters")
    func randomUUIDShapes() {
        var random = SplitMix64(seed: 0x1D)
        let alphabet = Array("0123456789abcdefABCDEF-_g.".utf8)
        for _ in 0..<20_000 {
            var bytes = (0..<36).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            // Mostly UUID-shaped, so the separators and case rules are what is tested.
            for index in [8, 13, 18, 23] where random.next() % 8 != 0 {
                bytes[index] = random.next() % 2 == 0 ? UInt8(ascii: "-") : UInt8(ascii: "_")
            }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.isCanonical(text) == Self.expected(text), "\(text)")
        }
    }
}

@Suite("Symbol")
struct SymbolTests {
    @Test("lowercase is upper-cased", arguments: [
        ("btc", "BTC"), ("Eth", "ETH"), ("1INCH", "1INCH"), ("ab", "AB"), ("BTC", "BTC"), ("ABCDEFGHIJ", "ABCDEFGHIJ"),
        ("abcdefghij", "ABCDEFGHIJ"),
    ])
    func normalises(text: String, expected: String) throws {
        #expect(try Symbol(validating: text).rawValue == expected)
    }

    @Test("invalid symbols are refused", arguments: [
        "", "B", "b", "BTC-USD", "ABCDEFGHIJK", "abcdefghijk", "ABCDEFGHIJKLMNOPQRSTU", "BTC ", "ΒTC", "BT\u{0}",
    ])
    func invalid(text: String) throws {
        let error = try #require(throws: ValidationError.self) { try Symbol(validating: text, field: "symbols[0]") }
        #expect(error.description.hasPrefix("symbols[0]: must be 2–10 characters of A-Z 0-9"))
    }
}
