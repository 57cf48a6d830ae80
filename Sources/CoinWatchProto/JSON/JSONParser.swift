/// A strict RFC 8259 reader for untrusted JSON.
///
/// Strings must be valid UTF-8 (checked with the same `UTF8Check` the binary decoder uses) and escapes well
/// formed; a `\u` escape of a lone surrogate is refused because it names no character. Numbers are checked
/// against the grammar and kept as text. Nesting is bounded by `maxDepth`, and the caller bounds the input
/// size, so hostile input costs at most a bounded amount of work and memory. Errors give the byte offset.
struct JSONParser {
    private let bytes: UnsafeRawBufferPointer
    private let maxDepth: Int
    private var index = 0

    /// Parses exactly one JSON value, surrounded by optional whitespace.
    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(JSONDecodingError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else {
            throw parser.error("unexpected text after the JSON value")
        }
        return value
    }

    private init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func error(_ reason: String, code: JSONDecodingError.Code = .syntax) -> JSONDecodingError {
        JSONDecodingError(code: code, typeName: "", detail: "invalid JSON at byte \(index): \(reason)")
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString, _ value: JSONValue) throws(JSONDecodingError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw error("unexpected character")
        }
        index += count
        return value
    }

    private mutating func value(depth: Int) throws(JSONDecodingError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            return try expect("true", .bool(true))
        case UInt8(ascii: "f"):
            return try expect("false", .bool(false))
        case UInt8(ascii: "n"):
            return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw error("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(JSONDecodingError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nested deeper than \(maxDepth) levels", code: .tooDeep) }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try value(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            case nil: throw error("unexpected end of input in an object")
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSONDecodingError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nested deeper than \(maxDepth) levels", code: .tooDeep) }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            case nil: throw error("unexpected end of input in an array")
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text.
    private mutating func number() throws(JSONDecodingError) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw error("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") {
            skipDigits()
        } else if let next = current, isDigit(next) {
            throw error("a number may not start with 0 followed by digits")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return .number(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    /// A string starting at the opening quote; runs without escapes are copied whole after a UTF-8 check.
    private mutating func string() throws(JSONDecodingError) -> String {
        index += 1
        var out: [UInt8] = []
        var runStart = index
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                try flushRun(from: runStart, into: &out)
                index += 1
                if byte == UInt8(ascii: "\"") {
                    return String(decoding: out, as: UTF8.self)
                }
                try escape(into: &out)
                runStart = index
            } else if byte < 0x20 {
                throw error("control character 0x\(String(byte, radix: 16)) in a string must be escaped")
            } else {
                index += 1
            }
        }
    }

    private func flushRun(from start: Int, into out: inout [UInt8]) throws(JSONDecodingError) {
        guard start < index else { return }
        if let problem = UTF8Check.firstProblem(bytes, from: start, to: index) {
            throw JSONDecodingError(
                code: .syntax, typeName: "", detail: "invalid JSON at byte \(start + problem.offset): invalid UTF-8"
            )
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
    }

    /// One escape after its backslash.
    private mutating func escape(into out: inout [UInt8]) throws(JSONDecodingError) {
        guard let byte = current else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("a high surrogate must be followed by a low one") }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("a high surrogate must be followed by a low one") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("a low surrogate without a high one")
            }
            appendUTF8(scalar, to: &out)
        default:
            throw error("unknown escape '\\\(Character(Unicode.Scalar(byte)))'")
        }
    }

    /// Appends the UTF-8 form of a Unicode scalar value (surrogates were excluded by the caller).
    private func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(0xC0 | UInt8(scalar >> 6))
            out.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(0xE0 | UInt8(scalar >> 12))
            out.append(0x80 | UInt8(scalar >> 6 & 0x3F))
            out.append(0x80 | UInt8(scalar & 0x3F))
        default:
            out.append(0xF0 | UInt8(scalar >> 18))
            out.append(0x80 | UInt8(scalar >> 12 & 0x3F))
            out.append(0x80 | UInt8(scalar >> 6 & 0x3F))
            out.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    private mutating func hex4() throws(JSONDecodingError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected 4 hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
