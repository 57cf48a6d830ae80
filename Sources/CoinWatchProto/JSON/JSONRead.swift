import CoinWatchCore

/// Readers of single field values, called by the generated JSON decoders.
///
/// Each returns nil for JSON `null` (the field keeps its default, as the mapping says), the value otherwise,
/// and throws an error without a location; the generated code adds the field path as the error unwinds.
enum JSONRead {
    static func wrongType(_ expected: String, _ value: JSONValue) -> JSONDecodingError {
        JSONDecodingError(code: .wrongType, typeName: "", detail: "expected \(expected), got \(value.kindName)")
    }

    /// The members of an object (a message).
    static func members(_ value: JSONValue) throws(JSONDecodingError) -> [JSONMember] {
        guard case .object(let members) = value else { throw wrongType("an object", value) }
        return members
    }

    /// The elements of an array; nil for null.
    static func elements(_ value: JSONValue) throws(JSONDecodingError) -> [JSONValue]? {
        switch value {
        case .null: return nil
        case .array(let elements): return elements
        default: throw wrongType("an array", value)
        }
    }

    /// The members of an object that is a map; nil for null.
    static func entries(_ value: JSONValue) throws(JSONDecodingError) -> [JSONMember]? {
        switch value {
        case .null: return nil
        case .object(let members): return members
        default: throw wrongType("an object", value)
        }
    }

    /// A list element or map value, where null is not allowed.
    static func present<T>(_ value: T?, _ json: JSONValue) throws(JSONDecodingError) -> T {
        guard let value else {
            throw JSONDecodingError(code: .wrongType, typeName: "", detail: "null is not allowed in a list or map")
        }
        return value
    }

    static func bool(_ value: JSONValue) throws(JSONDecodingError) -> Bool? {
        switch value {
        case .null: return nil
        case .bool(let flag): return flag
        default: throw wrongType("true or false", value)
        }
    }

    /// A string; U+0000 is refused because protobuf-c's strings end at it (the binary decoder refuses it too).
    static func string(_ value: JSONValue) throws(JSONDecodingError) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return try checkedString(text)
        default: throw wrongType("a string", value)
        }
    }

    /// A string that may be stored (map keys included).
    static func checkedString(_ text: String) throws(JSONDecodingError) -> String {
        guard !text.utf8.contains(0) else {
            throw JSONDecodingError(
                code: .invalidValue, typeName: "", detail: "a string may not contain U+0000 (\\u0000)"
            )
        }
        return text
    }

    static func bytes(_ value: JSONValue) throws(JSONDecodingError) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .string(let text):
            guard let bytes = Base64.decodeEitherAlphabet(text.utf8) else {
                throw JSONDecodingError(code: .invalidValue, typeName: "", detail: "not base64")
            }
            return bytes
        default: throw wrongType("a base64 string", value)
        }
    }

    static func integer<I: FixedWidthInteger>(_ value: JSONValue, as type: I.Type) throws(JSONDecodingError) -> I? {
        let text: String
        switch value {
        case .null: return nil
        case .number(let number): text = number
        case .string(let quoted): text = quoted
        default: throw wrongType("an integer (a number or a string)", value)
        }
        guard let exact = ExactInteger(text) else {
            throw JSONDecodingError(code: .outOfRange, typeName: "", detail: "\(quote(text)) is not an integer")
        }
        guard let result = exact.value(as: I.self) else {
            throw JSONDecodingError(
                code: .outOfRange, typeName: "", detail: "\(quote(text)) is outside the range of \(I.self)"
            )
        }
        return result
    }

    /// An enum by name or number; nil for null, and for an unknown name when unknown fields are ignored.
    static func enumValue<E: JSONEnum>(
        _ value: JSONValue, _ type: E.Type, options: JSONDecodingOptions
    ) throws(JSONDecodingError) -> E? {
        switch value {
        case .null:
            return nil
        case .string(let name):
            if let known = E.named(name) { return known }
            if options.ignoreUnknownFields { return nil }
            throw JSONDecodingError(code: .invalidValue, typeName: "", detail: "unknown enum value \(quote(name))")
        case .number:
            guard let number = try integer(value, as: Int32.self) else { return nil }
            return E(rawValue: number)
        default:
            throw wrongType("an enum name or number", value)
        }
    }

    /// At most 40 characters of `text`, quoted, for an error message.
    static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        JSONWriter.appendQuoted(text.count > 40 ? String(text.prefix(40)) + "…" : text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Which fields of a message a JSON object has set, to refuse a field given twice or two members of a oneof.
struct JSONSeenFields {
    private var bits: UInt64 = 0

    /// Marks slot `index` (a field's, or a oneof's); throws when it was already marked.
    mutating func insert(_ index: Int, _ what: @autoclosure () -> String) throws(JSONDecodingError) {
        let bit: UInt64 = 1 << UInt64(index)
        guard bits & bit == 0 else {
            throw JSONDecodingError(code: .duplicateField, typeName: "", detail: "\(what()) is set more than once")
        }
        bits |= bit
    }
}

/// A JSON number (or the digits of a quoted one) as an exact integer: sign and magnitude.
///
/// The grammar is JSON's; a fraction or exponent is allowed when the value is whole (`1e3`, `2.50e1`), as the
/// mapping permits. No floating point is involved: digits are shifted by the exponent, and any digit a negative
/// exponent would drop must be zero.
struct ExactInteger {
    let negative: Bool
    let magnitude: UInt64

    init?(_ text: String) {
        var utf8 = Array(text.utf8)[...]
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let integerDigits = utf8.prefix(while: isDigit)
        guard !integerDigits.isEmpty, integerDigits.count == 1 || integerDigits.first != UInt8(ascii: "0") else {
            return nil
        }
        utf8 = utf8.dropFirst(integerDigits.count)
        var fractionDigits: ArraySlice<UInt8> = []
        if utf8.first == UInt8(ascii: ".") {
            utf8 = utf8.dropFirst()
            fractionDigits = utf8.prefix(while: isDigit)
            guard !fractionDigits.isEmpty else { return nil }
            utf8 = utf8.dropFirst(fractionDigits.count)
        }
        var exponent = 0
        if utf8.first == UInt8(ascii: "e") || utf8.first == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            var exponentNegative = false
            if utf8.first == UInt8(ascii: "+") || utf8.first == UInt8(ascii: "-") {
                exponentNegative = utf8.first == UInt8(ascii: "-")
                utf8 = utf8.dropFirst()
            }
            let exponentDigits = utf8.prefix(while: isDigit)
            guard !exponentDigits.isEmpty else { return nil }
            utf8 = utf8.dropFirst(exponentDigits.count)
            for digit in exponentDigits {
                // Past a few hundred the answer is known (overflow, or zero digits); stop growing.
                exponent = min(exponent * 10 + Int(digit - UInt8(ascii: "0")), 10_000)
            }
            if exponentNegative { exponent = -exponent }
        }
        guard utf8.isEmpty else { return nil }

        // value = digits × 10^(exponent − fraction length)
        var digits = Array(integerDigits) + Array(fractionDigits)
        var shift = exponent - fractionDigits.count
        while shift < 0 {
            guard let last = digits.last else { break }
            guard last == UInt8(ascii: "0") else { return nil }
            digits.removeLast()
            shift += 1
        }
        var magnitude: UInt64 = 0
        var overflow = false
        for digit in digits {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            magnitude = sum
        }
        while shift > 0, magnitude != 0, !overflow {
            let (times10, o) = magnitude.multipliedReportingOverflow(by: 10)
            overflow = o
            magnitude = times10
            shift -= 1
        }
        self.negative = negative && magnitude != 0
        // An overflowing magnitude is kept as "too large for any type".
        self.magnitude = overflow ? .max : magnitude
        self.isOverflow = overflow
    }

    private var isOverflow = false

    /// The value as `I`, or nil outside its range.
    func value<I: FixedWidthInteger>(as type: I.Type) -> I? {
        guard !isOverflow else { return nil }
        if negative {
            guard I.isSigned else { return nil }
            // The most negative value's magnitude is one more than the largest positive one.
            guard magnitude <= UInt64(I.max) + 1 else { return nil }
            return magnitude == UInt64(I.max) + 1 ? I.min : 0 - I(magnitude)
        }
        guard magnitude <= UInt64(I.max) else { return nil }
        return I(magnitude)
    }
}

extension JSONRead {
    static func unknownField(_ key: String, in typeName: String) -> JSONDecodingError {
        JSONDecodingError(code: .unknownField, typeName: "", detail: "unknown field \(quote(key)) of \(typeName)")
    }

    static func duplicateKey() -> JSONDecodingError {
        JSONDecodingError(code: .duplicateField, typeName: "", detail: "the key is given more than once")
    }
}
