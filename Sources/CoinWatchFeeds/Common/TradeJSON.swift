/// A small JSON reader for one exchange message: a line of a recorded trade stream, or a WebSocket text message.
///
/// Numbers are kept as their source text, so a price such as `64250.50` reaches `ExactDecimal` digit for digit
/// instead of passing through a `Double`. Nesting, input size and string length are bounded by the caller's limit
/// (the replay's line limit, the WebSocket message limit) and `maxDepth`, so hostile input costs at most a
/// message's worth of work.
public enum TradeJSON {
    /// Not `indirect`: objects and arrays already hold their elements in heap storage, and boxing every scalar
    /// (each string and number of every message) cost an allocation apiece.
    public enum Value: Sendable, Hashable {
        case object([Member])
        case array([Value])
        case string(String)
        /// The number exactly as written.
        case number(String)
        case bool(Bool)
        case null

        public subscript(key: String) -> Value? {
            guard case .object(let members) = self else { return nil }
            return members.last { $0.key == key }?.value
        }

        public var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        /// The text of a number, or of a string holding one (exchanges quote prices both ways).
        public var numberText: String? {
            switch self {
            case .number(let text), .string(let text): text
            default: nil
            }
        }

        public var array: [Value]? {
            if case .array(let items) = self { return items }
            return nil
        }
    }

    public struct Member: Sendable, Hashable {
        public let key: String
        public let value: Value
    }

    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        public let column: Int
        public let reason: String

        public var description: String { "invalid JSON at column \(column): \(reason)" }
    }

    public static let maxDepth = 16

    /// Parses one complete JSON value (surrounding whitespace allowed).
    public static func parse(_ text: Substring) throws(SyntaxError) -> Value {
        var text = text
        var result: Result<Value, SyntaxError> = .failure(SyntaxError(column: 0, reason: "not parsed"))
        text.withUTF8 { bytes in
            result = Result { () throws(SyntaxError) in try parse(UnsafeRawBufferPointer(bytes)) }
        }
        return try result.get()
    }

    /// Parses one complete JSON value from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SyntaxError) -> Value {
        var parser = Parser(utf8: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.utf8.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let utf8: UnsafeRawBufferPointer
        var index = 0

        init(utf8: UnsafeRawBufferPointer) {
            self.utf8 = utf8
        }

        func error(_ reason: String) -> SyntaxError {
            SyntaxError(column: index + 1, reason: reason)
        }

        var current: UInt8? { index < utf8.count ? utf8[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> Value {
            guard depth <= TradeJSON.maxDepth else { throw error("nested deeper than \(TradeJSON.maxDepth) levels") }
            guard let byte = current else { throw error("unexpected end of line") }
            switch byte {
            case UInt8(ascii: "{"):
                return try object(depth: depth)
            case UInt8(ascii: "["):
                return try array(depth: depth)
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                throw error("unexpected character")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var members: [Member] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                index += 1
                skipWhitespace()
                members.append(Member(key: key, value: try value(depth: depth + 1)))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(members)
                default:
                    throw error("expected ',' or '}' in an object")
                }
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var elements: [Value] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default:
                    throw error("expected ',' or ']' in an array")
                }
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            for expected in word.utf8 {
                guard current == expected else { throw error("expected '\(word)'") }
                index += 1
            }
        }

        mutating func number() throws(SyntaxError) -> Value {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            var digits = 0
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                index += 1
                digits += 1
            }
            guard digits > 0 else { throw error("expected digits") }
            if current == UInt8(ascii: ".") {
                index += 1
                var fraction = 0
                while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                    index += 1
                    fraction += 1
                }
                guard fraction > 0 else { throw error("expected digits after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                var exponent = 0
                while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                    index += 1
                    exponent += 1
                }
                guard exponent > 0 else { throw error("expected exponent digits") }
            }
            return .number(String(decoding: UnsafeRawBufferPointer(rebasing: utf8[start..<index]), as: UTF8.self))
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            // The common case, a string without escapes, is taken as it stands.
            var end = index
            while end < utf8.count, utf8[end] != UInt8(ascii: "\""), utf8[end] != UInt8(ascii: "\\"), utf8[end] >= 0x20 {
                end += 1
            }
            if end < utf8.count, utf8[end] == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: utf8[index..<end]), as: UTF8.self)
                index = end + 1
                return text
            }
            var bytes: [UInt8] = []
            while true {
                guard let byte = current else { throw error("unterminated string") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: bytes, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { throw error("unterminated escape") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
                    case UInt8(ascii: "b"): bytes.append(0x08)
                    case UInt8(ascii: "f"): bytes.append(0x0C)
                    case UInt8(ascii: "n"): bytes.append(0x0A)
                    case UInt8(ascii: "r"): bytes.append(0x0D)
                    case UInt8(ascii: "t"): bytes.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar), current == UInt8(ascii: "\\"),
                           index + 1 < utf8.count, utf8[index + 1] == UInt8(ascii: "u")
                        {
                            index += 2
                            let low = try hex4()
                            if (0xDC00..<0xE000).contains(low) {
                                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            }
                        }
                        let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                        bytes.append(contentsOf: Array(String(Character(character)).utf8))
                    default:
                        throw error("unknown escape")
                    }
                case 0x00..<0x20:
                    throw error("control character in a string")
                default:
                    bytes.append(byte)
                }
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current else { throw error("short \\u escape") }
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("bad hex digit in \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
