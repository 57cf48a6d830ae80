import CoinWatchModel
import Testing
@testable import CoinWatchProto

/// The one JSON tokenizer, in either mode. (That skipping a document checks it exactly as building its tree does,
/// on thousands of broken copies of messages and in both modes, is checked by the feeds' `TradeJSONTests`, which
/// hold the mutations.)
struct JSONReaderTests {
    typealias Reader = JSONReader

    static let lenient = JSONReader.Options.lenient(maxDepth: 16)
    static let strict = JSONReader.Options.strict(maxDepth: 16)

    /// Runs `body` over a whole document's bytes.
    static func read<Result>(
        _ text: String, options: JSONReader.Options = lenient, _ body: (inout Reader) throws(JSONSyntaxError) -> Result
    ) throws(JSONSyntaxError) -> Result {
        var text = text
        let read = text.withUTF8 { utf8 in
            Swift.Result { () throws(JSONSyntaxError) in
                try Reader.read(UnsafeRawBufferPointer(utf8), options: options, body)
            }
        }
        return try read.get()
    }

    static func validate(_ bytes: [UInt8], options: JSONReader.Options = lenient) -> JSONSyntaxError? {
        bytes.withUnsafeBytes { raw -> JSONSyntaxError? in
            do throws(JSONSyntaxError) {
                try Reader.validate(raw, options: options)
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func walksMembersTakingSomeValuesAndSkippingTheRest() throws {
        let message = #" {"a":{"b":[1,{"c":"d"}],"e":null}, "type" : "trade","x":[[[]],{}],"n":-1.5e+3,"t":true,"f":false} "#
        var keys: [String] = []
        var type = ""
        var number = ""
        var inner: [String] = []
        _ = try Self.read(message) { (reader) throws(JSONSyntaxError) in
            try reader.object { (reader, key) throws(JSONSyntaxError) in
                keys.append(key.string)
                switch key {
                case "type":
                    type = try reader.token().text?.string ?? "?"
                case "n":
                    number = try reader.token().numberText ?? "?"
                case "a":
                    guard case .object(let nested) = try reader.token() else { return }
                    var again = nested.reader()
                    try again.object { (reader, key) throws(JSONSyntaxError) in
                        inner.append(key.string)
                        try reader.skip()
                    }
                default:
                    try reader.skip()
                }
            }
        }
        #expect(keys == ["a", "type", "x", "n", "t", "f"])
        #expect(type == "trade")
        #expect(number == "-1.5e+3")
        #expect(inner == ["b", "e"])
    }

    @Test func arraysHandOutTheirElementsInOrder() throws {
        var seen: [String] = []
        let token = try Self.read(#"[1, "two", [3], {"four":4}, null]"#) { (reader) throws(JSONSyntaxError) in
            try reader.array { (reader, position) throws(JSONSyntaxError) in
                let token = try reader.token()
                switch token {
                case .number, .string: seen.append("\(position):\(token.numberText ?? "")")
                case .array: seen.append("\(position):array")
                case .object: seen.append("\(position):object")
                case .null: seen.append("\(position):null")
                case .bool: seen.append("\(position):bool")
                }
            }
        }
        #expect(seen == ["0:1", "1:two", "2:array", "3:object", "4:null"])
        guard case .array(let nested) = token else {
            Issue.record("not an array")
            return
        }
        #expect(String(decoding: nested.bytes, as: UTF8.self) == #"[1, "two", [3], {"four":4}, null]"#)
        // Asking for an object where there is none reads nothing out of it, but still checks it.
        let other = try Self.read("[1,2]") { (reader) throws(JSONSyntaxError) in
            try reader.object { (_, _) throws(JSONSyntaxError) in Issue.record("no members") }
        }
        guard case .array = other else {
            Issue.record("not an array")
            return
        }
        #expect(throws: JSONSyntaxError.self) {
            try Self.read("[1,]") { (reader) throws(JSONSyntaxError) in try reader.object { (_, _) in } }
        }
    }

    @Test func keysAndStringsWithEscapesReadAsTheirText() throws {
        let message = #"{"t\u0079pe":"tr\u0061de","s":"a\"b\\c\/d\b\f\n\r\t","smile":"\ud83d\ude00","lone":"\ud800x","#
            + #""pair":"\ud800\u0041","low":"\udc00","plain":"trade"}"#
        var values: [String: String] = [:]
        var typeMatched = false
        var plainMatched = false
        _ = try Self.read(message) { (reader) throws(JSONSyntaxError) in
            try reader.object { (reader, key) throws(JSONSyntaxError) in
                let text = try reader.token().text!
                if key == "type" { typeMatched = text == "trade" }
                if key == "plain" { plainMatched = text == "trade" && !text.escaped }
                #expect(key.escaped == (key.string == "type"))
                values[key.string] = text.string
            }
        }
        #expect(typeMatched && plainMatched)
        #expect(values["type"] == "trade")
        #expect(values["s"] == "a\"b\\c/d\u{08}\u{0C}\n\r\t")
        #expect(values["smile"] == "😀")
        #expect(values["lone"] == "\u{FFFD}x")
        // A high surrogate takes the next \u escape as its low half; when that is none, both are lost to U+FFFD.
        #expect(values["pair"] == "\u{FFFD}")
        #expect(values["low"] == "\u{FFFD}")
    }

    @Test func nestingIsLimited() {
        let depth = Self.lenient.maxDepth
        let deepest = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        #expect(Self.validate(Array(deepest.utf8)) == nil)
        let tooDeep = "[" + deepest + "]"
        #expect(
            Self.validate(Array(tooDeep.utf8))?.description == "invalid JSON at column 18: nested deeper than 16 levels")
        let objects = String(repeating: #"{"a":"#, count: depth + 1) + "{}" + String(repeating: "}", count: depth + 1)
        #expect(Self.validate(Array(objects.utf8))?.reason == "nested deeper than 16 levels")
        // Skipping a value is no way around the limit.
        let skipped = #"{"type":"trade","x":"# + tooDeep + "}"
        let error = #expect(throws: JSONSyntaxError.self) {
            try Self.read(skipped) { (reader) throws(JSONSyntaxError) in
                try reader.object { (reader, _) throws(JSONSyntaxError) in try reader.skip() }
            }
        }
        #expect(error?.reason == "nested deeper than 16 levels")
        #expect(error?.code == .tooDeep)
        // The limit is on values: an empty array holds none, so it may stand one level deeper.
        let empty = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        #expect(Self.validate(Array(empty.utf8)) == nil)
        #expect(Self.validate(Array(tooDeep.utf8), options: Self.strict)?.code == .tooDeep)
    }

    @Test func syntaxErrorsSayWhereAndWhy() {
        let cases: [(String, String)] = [
            ("", "invalid JSON at column 1: unexpected end of line"),
            (#"{"a":1,}"#, "invalid JSON at column 8: expected a quoted key"),
            (#"{"a" 1}"#, "invalid JSON at column 6: expected ':' after a key"),
            (#"{"a":1 "b":2}"#, "invalid JSON at column 8: expected ',' or '}' in an object"),
            ("[1 2]", "invalid JSON at column 4: expected ',' or ']' in an array"),
            (#"{"a":tru}"#, "invalid JSON at column 9: expected 'true'"),
            (#"{"a":nul"#, "invalid JSON at column 9: expected 'null'"),
            (#"{"a":-}"#, "invalid JSON at column 7: expected digits"),
            (#"{"a":1.}"#, "invalid JSON at column 8: expected digits after '.'"),
            (#"{"a":1e}"#, "invalid JSON at column 8: expected exponent digits"),
            (#"{"a":"x"#, "invalid JSON at column 8: unterminated string"),
            (#"{"a":"\"#, "invalid JSON at column 8: unterminated escape"),
            (#"{"a":"\q"}"#, "invalid JSON at column 9: unknown escape"),
            (#"{"a":"\u12"}"#, "invalid JSON at column 11: bad hex digit in \\u escape"),
            (#"{"a":"\u12"#, "invalid JSON at column 11: short \\u escape"),
            ("{\"a\":\"x\u{01}\"}", "invalid JSON at column 9: control character in a string"),
            (#"{"a":1} x"#, "invalid JSON at column 9: unexpected text after the value"),
            (#"{"a":}"#, "invalid JSON at column 6: unexpected character"),
        ]
        // Both modes share the grammar, and so every one of these reasons.
        for options in [Self.lenient, Self.strict] {
            for (text, expected) in cases {
                let error = Self.validate(Array(text.utf8), options: options)
                #expect(error?.description == expected, "\(text)")
                #expect(error?.code == .syntax, "\(text)")
            }
        }
    }

    @Test func strictReadingRefusesWhatLenientReadingTakes() throws {
        let cases: [([UInt8], String)] = [
            (Array(#"{"a":"\ud800"}"#.utf8), "invalid JSON at column 13: a high surrogate must be followed by a low one"),
            (Array(#"{"a":"\ud800\u0041"}"#.utf8), "invalid JSON at column 19: a high surrogate must be followed by a low one"),
            (Array(#"{"a":"\udc00x"}"#.utf8), "invalid JSON at column 13: a low surrogate without a high one"),
            (Array(#"{"a":01}"#.utf8), "invalid JSON at column 7: a number may not start with 0 followed by digits"),
            (Array(#"[-007]"#.utf8), "invalid JSON at column 4: a number may not start with 0 followed by digits"),
            (Array(#"{"a":"ok"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8), "invalid JSON at column 9: invalid UTF-8"),
            (Array(#"["\n"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""]"#.utf8), "invalid JSON at column 5: invalid UTF-8"),
        ]
        for (bytes, expected) in cases {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.validate(bytes, options: Self.lenient) == nil, "\(text)")
            let error = Self.validate(bytes, options: Self.strict)
            #expect(error?.description == expected, "\(text)")
            #expect(error?.code == .syntax, "\(text)")
        }
        // What both take reads the same: a pair of surrogate escapes is one character, a lone zero is a number.
        let pair = try Self.read(#"["\ud83d\ude00", 0, -0.5]"#, options: Self.strict) { (reader) throws(JSONSyntaxError) in
            try JSONValue(reading: &reader)
        }
        #expect(pair == .array([.string("😀"), .number("0"), .number("-0.5")]))
    }

    /// A string's end, escape or control character is found wherever it stands among the eight bytes read at a time,
    /// and bytes of 0x80 and above (UTF-8's) never stop the scan.
    @Test func stringsEndWhereverTheirQuoteStands() throws {
        for length in 0...24 {
            for (stop, plain) in [("\"", true), ("\\n\"", false), ("\u{01}\"", false)] {
                let body = String(repeating: "é", count: length / 2) + String(repeating: "a", count: length % 2)
                let document = "[\"" + body + stop + "]"
                let read = document.utf8.withContiguousStorageIfAvailable { utf8 in
                    Swift.Result { () throws(JSONSyntaxError) in
                        try Reader.read(UnsafeRawBufferPointer(utf8), options: Self.lenient) {
                            (reader) throws(JSONSyntaxError) -> [String] in
                            var strings: [String] = []
                            try reader.array { (reader, _) throws(JSONSyntaxError) in
                                strings.append(try reader.token().text!.string)
                            }
                            return strings
                        }
                    }
                }
                switch (plain, stop) {
                case (true, _): #expect(try read?.get() == [body], "\(document)")
                case (false, "\\n\""): #expect(try read?.get() == [body + "\n"], "\(document)")
                default:
                    #expect(throws: JSONSyntaxError.self, "\(document)") { try read?.get() }
                }
            }
        }
        // Each stop byte in each lane of a word, the rest plain.
        for lane in 0..<8 {
            for stop: UInt8 in [0x22, 0x5C, 0x00, 0x1F] {
                var word = Array(repeating: UInt8(ascii: "a"), count: 8)
                word[lane] = stop
                for other in lane + 1..<8 { word[other] = [0x22, 0x5C, 0x00, 0x20, 0xFF][other % 5] }
                let marks = Reader.stopBytes(word.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
                #expect(marks.trailingZeroBitCount / 8 == lane, "\(word)")
            }
            var plain = Array(repeating: UInt8(ascii: "a"), count: 8)
            plain[lane] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xFF][lane]
            #expect(Reader.stopBytes(plain.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }) == 0)
        }
    }

    /// Plain digits are read in one pass to the number's value; anything `number()` must judge is left to it.
    @Test func plainDigitsReadAsOneNumberOrNotAtAll() {
        func digits(_ text: String, options: JSONReader.Options = JSONReaderTests.lenient) -> (UInt64, Int, Int)? {
            Array(text.utf8).withUnsafeBytes { bytes in
                var reader = JSONReader(bytes, options: options)
                guard let (value, fraction) = reader.plainDigits() else {
                    #expect(reader.index == 0, "moved on \(text)")
                    return nil
                }
                return (value, fraction, reader.index)
            }
        }
        #expect(digits("64250.5,")! == (642_505, 1, 7))
        #expect(digits("1575526691134}")! == (1_575_526_691_134, 0, 13))
        #expect(digits("0")! == (0, 0, 1))
        #expect(digits("007.10]")! == (710, 2, 6))
        #expect(digits("999999999999999999")! == (999_999_999_999_999_999, 0, 18))
        #expect(digits("0.00000000000000001")! == (1, 17, 19))
        for other in ["", "-1", "+1", "1.", ".5", "1e5", "1.5E2", "1.2.3", "1234567890123456789", "0.000000000000000001",
                      "x", "\"1\""]
        {
            #expect(digits(other) == nil, "\(other)")
        }
        // Bytes next to the digits ('/' and ':') end a run wherever they fall among eight.
        #expect(digits("1234567:89")! == (1_234_567, 0, 7))
        #expect(digits("12345678/9")! == (12_345_678, 0, 8))
        #expect(digits("123456789012345/")! == (123_456_789_012_345, 0, 15))
        // Any run of up to 18 digits, with or without a point, reads as the standard library reads its digits.
        var random = SeededGenerator(seed: 0x5EED_D161)
        for _ in 0..<2000 {
            let count = Int.random(in: 1...18, using: &random)
            let text = String((0..<count).map { _ in "0123456789".randomElement(using: &random)! })
            let point = Int.random(in: 0..<count, using: &random)
            let written = point == 0 ? text : String(text.prefix(point)) + "." + text.dropFirst(point)
            let read = digits(written + ",")
            #expect(read?.0 == UInt64(text) && read?.1 == (point == 0 ? 0 : count - point), "\(written)")
            #expect(read?.2 == written.utf8.count, "\(written)")
        }
        #expect(digits("01", options: Self.strict) == nil)
        #expect(digits("10", options: Self.strict)! == (10, 0, 2))
    }

    @Test func consumeStepsOverExactTextOnly() {
        Array(#"{"data":[1]}"#.utf8).withUnsafeBytes { bytes in
            var reader = JSONReader(bytes, options: Self.lenient)
            var steps: [(Bool, Int)] = []
            for text: StaticString in [#"{"type""#, #"{"data":["#, "1]}x", "1]}", "}"] {
                steps.append((reader.consume(text), reader.index))
            }
            #expect(steps.map(\.0) == [false, true, false, true, false])
            #expect(steps.map(\.1) == [0, 9, 9, bytes.count, bytes.count])
        }
    }
}
