@testable import CoinWatchFeeds

/// A whole message as a tree, built with `TradeJSON.Reader`: how venue messages used to be read (a tree first,
/// then lookups), kept as the second front end that the reader's tests and the reference venue readers use.
indirect enum ReferenceJSON: Hashable {
    case object([Member])
    case array([ReferenceJSON])
    case string(String)
    /// The number exactly as written.
    case number(String)
    case bool(Bool)
    case null

    struct Member: Hashable {
        let key: String
        let value: ReferenceJSON
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TradeJSON.SyntaxError) -> ReferenceJSON {
        try TradeJSON.Reader.read(bytes) { (reader) throws(TradeJSON.SyntaxError) in try value(&reader) }
    }

    static func parse(_ text: String) throws(TradeJSON.SyntaxError) -> ReferenceJSON {
        var text = text
        let parsed = text.withUTF8 { utf8 in
            Result { () throws(TradeJSON.SyntaxError) in try parse(UnsafeRawBufferPointer(utf8)) }
        }
        return try parsed.get()
    }

    static func value(_ reader: inout TradeJSON.Reader) throws(TradeJSON.SyntaxError) -> ReferenceJSON {
        if reader.current == UInt8(ascii: "[") {
            var elements: [ReferenceJSON] = []
            try reader.array { (reader, _) throws(TradeJSON.SyntaxError) in elements.append(try value(&reader)) }
            return .array(elements)
        }
        var members: [Member] = []
        let token = try reader.object { (reader, key) throws(TradeJSON.SyntaxError) in
            members.append(Member(key: key.string, value: try value(&reader)))
        }
        switch token {
        case .object: return .object(members)
        case .array: preconditionFailure("arrays are read above")
        case .string(let text): return .string(text.string)
        case .number(let bytes): return .number(String(decoding: bytes, as: UTF8.self))
        case .bool(let value): return .bool(value)
        case .null: return .null
        }
    }

    /// The last member named `key` (a repeated key counts once, as its last value).
    subscript(key: String) -> ReferenceJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
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

    var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    var keys: [String] {
        guard case .object(let members) = self else { return [] }
        return members.map(\.key)
    }
}
