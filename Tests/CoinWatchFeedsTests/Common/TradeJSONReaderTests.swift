import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

struct TradeJSONReaderTests {
    typealias Reader = TradeJSON.Reader

    /// Runs `body` over a whole message's bytes.
    static func read<Result>(
        _ text: String, _ body: (inout Reader) throws(TradeJSON.SyntaxError) -> Result
    ) throws(TradeJSON.SyntaxError) -> Result {
        var text = text
        let read = text.withUTF8 { utf8 in
            Swift.Result { () throws(TradeJSON.SyntaxError) in try Reader.read(UnsafeRawBufferPointer(utf8), body) }
        }
        return try read.get()
    }

    static func validate(_ bytes: [UInt8]) -> TradeJSON.SyntaxError? {
        bytes.withUnsafeBytes { raw -> TradeJSON.SyntaxError? in
            do throws(TradeJSON.SyntaxError) {
                try Reader.validate(raw)
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
        try Self.read(message) { (reader) throws(TradeJSON.SyntaxError) in
            try reader.object { (reader, key) throws(TradeJSON.SyntaxError) in
                keys.append(key.string)
                switch key {
                case "type":
                    type = try reader.token().text?.string ?? "?"
                case "n":
                    number = try reader.token().numberText ?? "?"
                case "a":
                    guard case .object(let nested) = try reader.token() else { return }
                    var again = nested.reader()
                    try again.object { (reader, key) throws(TradeJSON.SyntaxError) in
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
        let token = try Self.read(#"[1, "two", [3], {"four":4}, null]"#) { (reader) throws(TradeJSON.SyntaxError) in
            try reader.array { (reader, position) throws(TradeJSON.SyntaxError) in
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
        let other = try Self.read("[1,2]") { (reader) throws(TradeJSON.SyntaxError) in
            try reader.object { (_, _) throws(TradeJSON.SyntaxError) in Issue.record("no members") }
        }
        guard case .array = other else {
            Issue.record("not an array")
            return
        }
        #expect(throws: TradeJSON.SyntaxError.self) {
            try Self.read("[1,]") { (reader) throws(TradeJSON.SyntaxError) in try reader.object { (_, _) in } }
        }
    }

    @Test func keysAndStringsWithEscapesReadAsTheirText() throws {
        let message = #"{"t\u0079pe":"tr\u0061de","s":"a\"b\\c\/d\b\f\n\r\t","smile":"\ud83d\ude00","lone":"\ud800x","#
            + #""pair":"\ud800\u0041","low":"\udc00","plain":"trade"}"#
        var values: [String: String] = [:]
        var typeMatched = false
        var plainMatched = false
        try Self.read(message) { (reader) throws(TradeJSON.SyntaxError) in
            try reader.object { (reader, key) throws(TradeJSON.SyntaxError) in
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
        let depth = TradeJSON.maxDepth
        let deepest = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        #expect(Self.validate(Array(deepest.utf8)) == nil)
        let tooDeep = "[" + deepest + "]"
        #expect(
            Self.validate(Array(tooDeep.utf8))?.description == "invalid JSON at column 18: nested deeper than 16 levels")
        let objects = String(repeating: #"{"a":"#, count: depth + 1) + "{}" + String(repeating: "}", count: depth + 1)
        #expect(Self.validate(Array(objects.utf8))?.reason == "nested deeper than 16 levels")
        // Skipping a value is no way around the limit.
        let skipped = #"{"type":"trade","x":"# + tooDeep + "}"
        let error = #expect(throws: TradeJSON.SyntaxError.self) {
            try Self.read(skipped) { (reader) throws(TradeJSON.SyntaxError) in
                try reader.object { (reader, _) throws(TradeJSON.SyntaxError) in try reader.skip() }
            }
        }
        #expect(error?.reason == "nested deeper than 16 levels")
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
        for (text, expected) in cases {
            #expect(Self.validate(Array(text.utf8))?.description == expected, "\(text)")
        }
    }

    /// Skipping a message checks it exactly as reading all of it does. (Until the venues read with the reader,
    /// these copies were also held to the tree parser it replaced: the same verdicts, errors and trees.)
    @Test func everyBrokenCopyOfAMessageIsCheckedAsReadingItAllChecksIt() {
        let messages = [
            #"{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}]}"#,
            #"{"stream":"btcusdt@trade","data":{"e":"trade","s":"BTC\u0055SDT","p":"64250.5","T":-1e-2,"m":true,"#
                + #""M":false,"x":null}}"#,
            #"[{"a":[[]],"b":{}}, "\ud83d\ude00", -0.5E+7, true]"#,
        ]
        for (index, message) in messages.enumerated() {
            let random = MessageMutations.random(of: message, count: 2000, seed: UInt64(index))
            for mutated in MessageMutations.everyPosition(of: message) + random {
                let fromSkip = Self.validate(mutated)
                let fromTree = mutated.withUnsafeBytes { raw in
                    Result { () throws(TradeJSON.SyntaxError) in try ReferenceJSON.parse(raw) }
                }
                let text = String(decoding: mutated, as: UTF8.self)
                switch fromTree {
                case .success: #expect(fromSkip == nil, "\(text)")
                case .failure(let error): #expect(fromSkip == error, "\(text)")
                }
            }
        }
    }
}
