import CoinWatchProto
@testable import CoinWatchFeeds

/// A whole message as a tree: how venue messages used to be read (a tree first, then lookups), kept as the
/// second front end that the reader's tests and the reference venue readers use. The tree is the one the proto3
/// JSON decoders take, built from `JSONReader`'s tokens under the feeds' rules.
typealias ReferenceJSON = JSONValue

extension JSONValue {
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> ReferenceJSON {
        try TradeJSON.read(bytes) { (reader) throws(JSONSyntaxError) in try JSONValue(reading: &reader) }
    }

    static func parse(_ text: String) throws(JSONSyntaxError) -> ReferenceJSON {
        var text = text
        let parsed = text.withUTF8 { utf8 in
            Result { () throws(JSONSyntaxError) in try parse(UnsafeRawBufferPointer(utf8)) }
        }
        return try parsed.get()
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var numberText: String? {
        switch self {
        case .number(let text), .string(let text): text
        default: nil
        }
    }

    var array: [ReferenceJSON]? {
        if case .array(let items) = self { return items }
        return nil
    }
}
