/// A parsed JSON document (built from `JSONReader`'s tokens by `init(parsing:options:)`).
///
/// Numbers keep the text they were written with, so an integer such as `"18446744073709551615"` or a mantissa
/// reaches its field digit for digit and no value ever passes through a binary float. Object members keep their
/// order and duplicates; the message decoders decide what a duplicate means.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number exactly as written (RFC 8259 grammar, already checked).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// A short name of the value's kind for error messages ("a string", "an object").
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One `"key": value` pair of a JSON object.
public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

extension JSONValue {
    /// The value of the last member named `key` of an object; nil for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }
}
