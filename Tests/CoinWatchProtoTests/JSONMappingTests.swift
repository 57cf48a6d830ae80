@testable import CoinWatchProto
import Testing

/// The proto3 JSON mapping's rules, one by one, on the generated messages.
@Suite("JSON mapping")
struct JSONMappingTests {
    private func decode<M: JSONMessage>(
        _ type: M.Type, _ json: String, ignoringUnknown: Bool = false
    ) throws(JSONDecodingError) -> M {
        try M(jsonString: json, options: JSONDecodingOptions(ignoreUnknownFields: ignoringUnknown))
    }

    private func failure<M: JSONMessage>(_ type: M.Type, _ json: String) -> JSONDecodingError? {
        do {
            _ = try decode(type, json)
            return nil
        } catch {
            return error
        }
    }

    @Test("canonical output: JSON names, 64-bit integers as strings, defaults left out, map keys sorted")
    func canonicalOutput() {
        let settings = V1.Settings(
            deviceID: "phone-1",
            rules: [
                "ETH": V1.AlertRule(above: V1.Decimal(mantissa: 3000, scale: 0)),
                "BTC": V1.AlertRule(below: V1.Decimal(mantissa: 600_005, scale: 1)),
            ],
            version: 18_446_744_073_709_551_615
        )
        #expect(
            settings.jsonString()
                == #"{"deviceId":"phone-1","rules":{"BTC":{"below":{"mantissa":"600005","scale":1}},"#
                + #""ETH":{"above":{"mantissa":"3000"}}},"version":"18446744073709551615"}"#
        )
        #expect(V1.Settings().jsonString() == "{}")
        #expect(V1.AlertRule(below: V1.Decimal()).jsonString() == #"{"below":{}}"#, "a present message is written")
    }

    @Test("a oneof member is written even at its default value")
    func oneofAtDefault() throws {
        let request = V1.SaveSettingsRequest(deviceID: "d", precondition: .expectedVersion(0))
        #expect(request.jsonString() == #"{"deviceId":"d","expectedVersion":"0"}"#)
        #expect(try decode(V1.SaveSettingsRequest.self, request.jsonString()) == request)
        #expect(try decode(V1.SaveSettingsRequest.self, #"{"deviceId":"d"}"#).precondition == nil)
        #expect(try decode(V1.SaveSettingsRequest.self, #"{"expectedVersion":null}"#).precondition == nil)
    }

    @Test("enums by name, numbers accepted, unnamed numbers written as numbers")
    func enums() throws {
        #expect(V1.Alert(direction: .below).jsonString() == #"{"direction":"DIRECTION_BELOW"}"#)
        #expect(V1.Alert(direction: .init(rawValue: 77)).jsonString() == #"{"direction":77}"#)
        #expect(try decode(V1.Alert.self, #"{"direction":1}"#).direction == .above)
        #expect(try decode(V1.Alert.self, #"{"direction":"DIRECTION_ABOVE"}"#).direction == .above)
        #expect(try decode(V1.Alert.self, #"{"direction":-3}"#).direction.rawValue == -3)
        #expect(failure(V1.Alert.self, #"{"direction":"UP"}"#)?.code == .invalidValue)
        #expect(try decode(V1.Alert.self, #"{"direction":"UP"}"#, ignoringUnknown: true).direction == .unspecified)
    }

    @Test("both field names are accepted; the same field twice is not")
    func fieldNames() throws {
        #expect(try decode(V1.GetSettingsRequest.self, #"{"device_id":"a"}"#).deviceID == "a")
        #expect(try decode(V1.GetSettingsRequest.self, #"{"deviceId":"a"}"#).deviceID == "a")
        let twice = failure(V1.GetSettingsRequest.self, #"{"deviceId":"a","device_id":"b"}"#)
        #expect(twice?.code == .duplicateField)
        #expect(twice?.message == "coinwatch.v1.GetSettingsRequest.deviceId: deviceId is set more than once")
        #expect(failure(V1.Frame.self, #"{"hello":{},"cancel":{"callId":"1"}}"#)?.code == .duplicateField)
        #expect(failure(V1.Settings.self, #"{"rules":{"A":{},"A":{}}}"#)?.code == .duplicateField)
    }

    @Test("unknown fields are refused by default and skipped on request")
    func unknownFields() throws {
        let error = failure(V1.GetSettingsRequest.self, #"{"deviceId":"a","colour":[1,{"x":null}]}"#)
        #expect(error?.code == .unknownField)
        #expect(error?.message == #"coinwatch.v1.GetSettingsRequest: unknown field "colour" of coinwatch.v1.GetSettingsRequest"#)
        let lenient = try decode(V1.GetSettingsRequest.self, #"{"deviceId":"a","colour":[1,{"x":null}]}"#, ignoringUnknown: true)
        #expect(lenient.deviceID == "a")
    }

    @Test("integers: numbers or strings, exact exponents, ranges checked, never through a float")
    func integers() throws {
        #expect(try decode(V1.Decimal.self, #"{"mantissa":"-9223372036854775808"}"#).mantissa == .min)
        #expect(try decode(V1.Decimal.self, #"{"mantissa":9223372036854775807}"#).mantissa == .max)
        #expect(try decode(V1.Decimal.self, #"{"mantissa":"1e3","scale":2.0}"#) == V1.Decimal(mantissa: 1000, scale: 2))
        #expect(try decode(V1.Decimal.self, #"{"mantissa":12.50e1}"#).mantissa == 125)
        #expect(try decode(V1.Decimal.self, #"{"mantissa":-0}"#).mantissa == 0)
        #expect(try decode(V1.Decimal.self, #"{"mantissa":0e99999}"#).mantissa == 0)
        #expect(try decode(V1.Settings.self, #"{"version":"18446744073709551615"}"#).version == .max)
        for bad in [#""9223372036854775808""#, "1.5", #""1.5""#, "1e400", #""""#, #"" 1""#, #""+1""#, #""0x10""#, "true"] {
            let error = failure(V1.Decimal.self, #"{"mantissa":\#(bad)}"#)
            #expect(error != nil, "accepted \(bad)")
            #expect(error?.fieldPath == "mantissa")
        }
        #expect(failure(V1.Decimal.self, #"{"scale":-1}"#)?.code == .outOfRange)
        #expect(failure(V1.Decimal.self, #"{"scale":4294967296}"#)?.code == .outOfRange)
    }

    @Test("bytes: base64 written padded, read in either alphabet with or without padding")
    func bytes() throws {
        let ping = V1.Ping(payload: [0xFB, 0xFF, 0x00, 0x01])
        #expect(ping.jsonString() == #"{"payload":"+/8AAQ=="}"#)
        #expect(try decode(V1.Ping.self, #"{"payload":"-_8AAQ"}"#) == ping)
        #expect(try decode(V1.Ping.self, #"{"payload":"+/8AAQ=="}"#) == ping)
        for bad in ["A", "AB=C", "****", "AAAAA===", "AQ=", "AR=="] {
            #expect(failure(V1.Ping.self, #"{"payload":"\#(bad)"}"#)?.code == .invalidValue, "accepted \(bad)")
        }
    }

    @Test("null means the default; null inside a list or map is refused")
    func nulls() throws {
        let value = try decode(
            V1.SaveSettingsRequest.self, #"{"deviceId":null,"setRules":null,"removeSymbols":null}"#)
        #expect(value == V1.SaveSettingsRequest())
        #expect(failure(V1.SaveSettingsRequest.self, #"{"removeSymbols":["A",null]}"#)?.fieldPath == "removeSymbols[1]")
        #expect(failure(V1.SaveSettingsRequest.self, #"{"setRules":{"BTC":null}}"#)?.fieldPath == #"setRules["BTC"]"#)
        #expect(failure(V1.GetSettingsRequest.self, "null")?.code == .wrongType)
    }

    @Test("errors name the type and the path of the field")
    func errorPaths() {
        let error = failure(V1.SaveSettingsRequest.self, #"{"setRules":{"BTC":{"below":{"mantissa":true}}}}"#)
        #expect(error?.code == .wrongType)
        #expect(error?.typeName == "coinwatch.v1.SaveSettingsRequest")
        #expect(error?.fieldPath == #"setRules["BTC"].below.mantissa"#)
        #expect(
            error?.message == #"coinwatch.v1.SaveSettingsRequest.setRules["BTC"].below.mantissa: "#
                + "expected an integer (a number or a string), got a boolean"
        )
    }

    @Test("written strings: every escape at the start, middle and end of a run, and decoding gives the text back")
    func writtenStrings() throws {
        let pieces = ["a", "\"", "\\", "\n", "\r", "\t", "\u{1}", "\u{1F}", "\u{7F}", "é", "€", "😀", "zz"]
        var generator = SystemRandomNumberGenerator()
        var texts = pieces + pieces.map { $0 + $0 } + ["", "plain-id-123"]
        for _ in 0..<300 {
            texts.append((0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        for text in texts where !text.contains("\u{0}") {
            // The byte-by-byte reference: escape a quote, a backslash and every control character, nothing else.
            var expected = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": expected += "\\\""
                case "\\": expected += "\\\\"
                case "\n": expected += "\\n"
                case "\r": expected += "\\r"
                case "\t": expected += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    expected += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: expected.unicodeScalars.append(scalar)
                }
            }
            expected += "\""
            var written: [UInt8] = []
            JSONWriter.appendQuoted(text, to: &written)
            #expect(String(decoding: written, as: UTF8.self) == expected, "\(Array(text.unicodeScalars))")
            let json = #"{"deviceId":"# + String(decoding: written, as: UTF8.self) + "}"
            #expect(try decode(V1.GetSettingsRequest.self, json).deviceID == text)
        }
    }

    @Test("strings: escapes and surrogate pairs decode, control characters are escaped, U+0000 is refused")
    func strings() throws {
        let decoded = try decode(V1.GetSettingsRequest.self, #"{"deviceId":"a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00€"}"#)
        #expect(decoded.deviceID == "a\"\\/\u{8}\u{C}\n\r\té😀€")
        #expect(V1.GetSettingsRequest(deviceID: "\u{1}\"é\n").jsonString() == #"{"deviceId":"\u0001\"é\n"}"#)
        #expect(failure(V1.GetSettingsRequest.self, #"{"deviceId":"a\u0000"}"#)?.code == .invalidValue)
        #expect(failure(V1.Settings.self, #"{"rules":{"\u0000":{}}}"#)?.code == .invalidValue)
        for bad in [#"{"deviceId":"\ud800"}"#, #"{"deviceId":"\udc00x"}"#, #"{"deviceId":"\ud800\u0041"}"#,
                    #"{"deviceId":"\x"}"#, "{\"deviceId\":\"a\tb\"}", #"{"deviceId":"\u12"}"#] {
            #expect(failure(V1.GetSettingsRequest.self, bad)?.code == .syntax, "accepted \(bad)")
        }
        let invalidUTF8: [UInt8] = Array(#"{"deviceId":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: JSONDecodingError.self) { try V1.GetSettingsRequest(jsonUTF8: invalidUTF8) }
    }

    @Test("not JSON: every malformed document is a syntax error with its byte offset")
    func syntax() {
        for bad in ["", " ", "{", "{\"deviceId\"}", "{\"deviceId\":}", "{,}", "{\"a\":1,}", "[1]", "{} {}", "{'a':1}",
                    "{\"mantissa\":01}", "{\"mantissa\":1.}", "{\"mantissa\":-}", "{\"mantissa\":1e}", "nul", "tru"] {
            let error = failure(V1.Decimal.self, bad)
            #expect(error != nil, "accepted \(bad)")
            #expect(error.map { $0.code == .syntax || $0.code == .wrongType } ?? false, "\(bad): \(String(describing: error))")
        }
        #expect(failure(V1.Decimal.self, "{\"scale\":1 x}")?.message == "coinwatch.v1.Decimal: invalid JSON at byte 11: expected ',' or '}' in an object")
    }

    @Test("limits: size and nesting depth are bounded")
    func limits() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let error = failure(V1.GetSettingsRequest.self, #"{"x":\#(deep)}"#)
        #expect(error?.code == .tooDeep)
        let big = #"{"deviceId":""# + String(repeating: "a", count: 2000) + #""}"#
        #expect(throws: JSONDecodingError.self) {
            try V1.GetSettingsRequest(jsonString: big, options: JSONDecodingOptions(maxBytes: 1000))
        }
        #expect((try? V1.GetSettingsRequest(jsonString: big, options: JSONDecodingOptions(maxBytes: 3000))) != nil)
    }

    @Test("random values of every type survive Swift → JSON → Swift", arguments: MessageType.all)
    func roundTrip(_ messageType: MessageType) throws {
        try roundTrip(messageType.type, seed: messageType.seed)
    }

    private func roundTrip<M: RandomMessage>(_ type: M.Type, seed: UInt64) throws {
        var g = RandomValues(seed: seed ^ 0x15)
        for value in M.filledSamples(using: &g) + (0..<30).map({ _ in M.random(using: &g, filled: false, depth: 0) }) {
            let json = value.jsonUTF8()
            #expect(try M(jsonUTF8: json) == value, "via \(String(decoding: json, as: UTF8.self))")
            #expect(try M(jsonUTF8: json).jsonUTF8() == json, "not deterministic")
        }
    }

    @Test("mutated JSON of every type decodes or fails cleanly", arguments: MessageType.all)
    func mutations(_ messageType: MessageType) {
        mutations(messageType.type, seed: messageType.seed)
    }

    private func mutations<M: RandomMessage>(_ type: M.Type, seed: UInt64) {
        var g = RandomValues(seed: seed ^ 0x3A)
        for value in M.filledSamples(using: &g) {
            let json = value.jsonUTF8()
            for _ in 0..<200 {
                let mutated = g.mutatedJSON(json)
                do {
                    let decoded = try M(jsonUTF8: mutated)
                    #expect(try M(jsonUTF8: decoded.jsonUTF8()) == decoded)
                } catch {
                    #expect(error.typeName == M.protoName)
                    #expect(error.message.hasPrefix(M.protoName))
                }
            }
        }
    }
}

@Suite("JSON documents")
struct JSONDocumentTests {
    @Test("any JSON document parses with numbers kept as written")
    func documents() throws {
        let text = #"{"e":"trade","p":"64250.50","q":0.00012000,"list":[true,false,null,-1e-3],"e":"last"}"#
        let value = try Array(text.utf8).withUnsafeBytes { try JSONValue(parsing: $0) }
        #expect(value["e"] == .string("last"))
        #expect(value["q"] == .number("0.00012000"))
        #expect(value["list"] == .array([.bool(true), .bool(false), .null, .number("-1e-3")]))
        #expect(value["missing"] == nil)
        #expect(JSONValue.string("x")["e"] == nil)
        #expect(throws: JSONDecodingError.self) {
            try Array("[[[1]]]".utf8).withUnsafeBytes { try JSONValue(parsing: $0, maxDepth: 2) }
        }
    }
}
