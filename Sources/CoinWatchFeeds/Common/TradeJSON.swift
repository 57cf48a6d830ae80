/// A small JSON reader for one line of a recorded trade stream.
///
/// Numbers are kept as their source text, so a price such as `64250.50` reaches `ExactDecimal` digit for digit
/// instead of passing through a `Double`. Nesting, input size and string length are bounded by the caller's line
/// limit and `maxDepth`, so hostile input costs at most a line's worth of work.
enum TradeJSON {
    indirect enum Value: Sendable, Hashable {
        case object([Member])
        case array([Value])
        case string(String)
        /// The number exactly as written.
        case number(Substring)
        case bool(Bool)
        case null

        subscript(key: String) -> Value? {
            guard case .object(let members) = self else { return nil }
            return members.last { $0.key == key }?.value
        }

        var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }
    }

    struct Member: Sendable, Hashable {
        let key: String
        let value: Value
    }

    struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        let column: Int
        let reason: String

        var description: String { "invalid JSON at column \(column): \(reason)" }
    }

    static let maxDepth = 16

    /// Parses one complete JSON value (surrounding whitespace allowed).
    static func parse(_ text: Substring) throws(SyntaxError) -> Value {
        var parser = Parser(utf8: Array(text.utf8), source: text)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.utf8.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let utf8: [UInt8]
        let source: Substring
        var index = 0

        init(utf8: [UInt8], source: Substring) {
            self.utf8 = utf8
            self.source = source
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
            // The parser walked ASCII only, so byte offsets are valid UTF-8 offsets into `source`.
            let utf8View = source.utf8
            let from = utf8View.index(utf8View.startIndex, offsetBy: start)
            let to = utf8View.index(from, offsetBy: index - start)
            return .number(source[from..<to])
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
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
