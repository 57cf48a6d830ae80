import Testing
@testable import CoinWatchHTTP

/// The request fields an HTTP/2 connection reads by name, and the values it keeps from its last requests.
@Suite struct HTTP2RequestFieldsTests {
    static func name(_ text: String) -> HTTP2RequestFields.Name? {
        Array(text.utf8).withUnsafeBytes { HTTP2RequestFields.Name($0) }
    }

    @Test("each field is recognised by its exact name; others, near misses and upper case are not")
    func names() {
        for field in HTTP2RequestFields.Name.allCases {
            #expect(Self.name(field.text) == field, "\(field.text)")
            #expect(field.isPseudo == field.text.hasPrefix(":"), "\(field.text)")
        }
        for other in ["", "t", "tE", "TE", "ta", ":pat", ":paths", ":methox", ":schemE", ":authorit", "user-agenT",
                      "content-typo", "grpc-timeouts", "grpc-encodinG", "grpc-message", "x-request-id", "host",
                      "Content-Type", "grpc-timeou\u{74}x"] {
            #expect(Self.name(other) == nil, "\(other)")
        }
    }

    @Test("a value the same as its field's last one is that String; a different one replaces it")
    func values() {
        var fields = HTTP2RequestFields()
        func value(_ field: HTTP2RequestFields.Name, _ text: String) -> String {
            Array(text.utf8).withUnsafeBytes { fields.value(field, $0) }
        }
        let first = value(.contentType, "application/grpc+proto")
        let again = value(.contentType, "application/grpc+proto")
        #expect(again == "application/grpc+proto")
        #expect(Self.sameStorage(first, again))
        #expect(value(.contentType, "application/json") == "application/json")
        #expect(value(.contentType, "application/grpc+proto") == "application/grpc+proto")
        // Fields do not share values.
        #expect(value(.userAgent, "application/json") == "application/json")
        #expect(value(.te, "") == "")
        #expect(value(.te, "trailers") == "trailers")
        // The same length, other bytes.
        #expect(value(.te, "trailerz") == "trailerz")
        #expect(value(.contentType, "application/json") == "application/json")
        #expect(value(.contentType, "application/grpc") == "application/grpc")
        // Bytes that are not UTF-8 are repaired as before, and a repeat of them is still read afresh correctly.
        let invalid: [UInt8] = [0x61, 0xFF, 0x62]
        let repaired = invalid.withUnsafeBytes { fields.value(.grpcEncoding, $0) }
        #expect(repaired == "a\u{FFFD}b")
        #expect(invalid.withUnsafeBytes { fields.value(.grpcEncoding, $0) } == "a\u{FFFD}b")
    }

    @Test("a path the same as the last one gives the same split target")
    func targets() {
        var fields = HTTP2RequestFields()
        func target(_ text: String) -> RequestTarget { Array(text.utf8).withUnsafeBytes { fields.target($0) } }
        let first = target("/coinwatch.v1.CoinWatch/GetSettings?x=1")
        #expect(first.path == "/coinwatch.v1.CoinWatch/GetSettings")
        #expect(first.query == "x=1")
        #expect(target("/coinwatch.v1.CoinWatch/GetSettings?x=1") == first)
        let other = target("/coinwatch.v1.Health/Check")
        #expect(other.path == "/coinwatch.v1.Health/Check")
        #expect(other.query == nil)
    }

    /// Whether two Strings share their storage (the second was not made anew).
    static func sameStorage(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.baseAddress == y.baseAddress } }
    }
}
