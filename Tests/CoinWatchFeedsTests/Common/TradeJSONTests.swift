import CoinWatchModel
import CoinWatchProto
import Testing
@testable import CoinWatchFeeds

/// The feeds' rules for the JSON reader (its own tests are `CoinWatchProtoTests/JSON/JSONReaderTests`).
struct TradeJSONTests {
    static func validate(_ bytes: [UInt8], options: JSONReader.Options = TradeJSON.options) -> JSONSyntaxError? {
        let checked = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONSyntaxError) in try JSONReader.validate(raw, options: options) }
        }
        guard case .failure(let error) = checked else { return nil }
        return error
    }

    /// Exchange messages are read leniently, and nest at most 16 levels deep.
    @Test func messagesAreReadLenientlyAndNestingIsLimited() throws {
        #expect(TradeJSON.options == .lenient(maxDepth: 16))
        let deepest = String(repeating: "[", count: 16) + "1" + String(repeating: "]", count: 16)
        #expect(Self.validate(Array(deepest.utf8)) == nil)
        let skipped = #"{"type":"trade","x":["# + deepest + "]}"
        #expect(Self.validate(Array(skipped.utf8))?.description == "invalid JSON at column 37: nested deeper than 16 levels")
        let taken = try ReferenceJSON.parse(#"{"s":"BTC\ud800","p":0064250.5}"#)
        #expect(taken["s"] == .string("BTC\u{FFFD}"))
        #expect(taken["p"] == .number("0064250.5"))
    }

    /// Skipping a message checks it exactly as reading all of it does, under the feeds' rules and under the strict
    /// ones. (Until the venues read with the reader, these copies were also held to the tree parser it replaced:
    /// the same verdicts, errors and trees.)
    @Test func everyBrokenCopyOfAMessageIsCheckedAsReadingItAllChecksIt() {
        let messages = [
            #"{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}]}"#,
            #"{"stream":"btcusdt@trade","data":{"e":"trade","s":"BTC\u0055SDT","p":"64250.5","T":-1e-2,"m":true,"#
                + #""M":false,"x":null}}"#,
            #"[{"a":[[]],"b":{}}, "\ud83d\ude00", -0.5E+7, true]"#,
        ]
        let strict = JSONReader.Options.strict(maxDepth: TradeJSON.maxDepth)
        for (index, message) in messages.enumerated() {
            let random = MessageMutations.random(of: message, count: 2000, seed: UInt64(index))
            for mutated in MessageMutations.everyPosition(of: message) + random {
                let text = String(decoding: mutated, as: UTF8.self)
                for options in [TradeJSON.options, strict] {
                    let fromSkip = Self.validate(mutated, options: options)
                    let fromTree = mutated.withUnsafeBytes { raw in
                        Result { () throws(JSONSyntaxError) in
                            try JSONReader.read(raw, options: options) { (reader) throws(JSONSyntaxError) in
                                try JSONValue(reading: &reader)
                            }
                        }
                    }
                    switch fromTree {
                    case .success: #expect(fromSkip == nil, "\(text)")
                    case .failure(let error): #expect(fromSkip == error, "\(text)")
                    }
                }
            }
        }
    }
}
