public import CoinWatchCore

/// A pull reader over one JSON document's UTF-8 bytes: the only JSON tokenizer of the project.
///
/// It builds nothing. A caller walks an object's members with `object(_:)`, compares each key as bytes, takes the
/// values it needs as `Token`s (a string's or number's bytes where they stand) and skips the rest: the feeds read
/// an exchange's trade message that way without an allocation, and `JSONValue(reading:)` builds the tree the
/// proto3 JSON decoders take from the same calls. Skipping still checks a value completely: a document is refused
/// for any syntax error wherever it is, with the same offset and reason whichever caller walks it, and
/// `read(_:options:_:)` refuses text after the value. How strict it is and how deep values may nest are the
/// caller's `Options`, not a second implementation.
///
/// The reader lives here, below every module that reads JSON, and its hot paths are `@inlinable` so that a reader
/// in another module (a venue's) is specialised and inlined as if it were its own.
public struct JSONReader {
    public let bytes: UnsafeRawBufferPointer
    public let options: Options
    @usableFromInline var position = 0
    @usableFromInline var level: Int

    /// A reader at the start of `bytes`, whose value stands inside `depth` arrays and objects.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, options: Options, depth: Int = 0) {
        self.bytes = bytes
        self.options = options
        self.level = depth
    }

    /// The offset of the cursor in `bytes`.
    @inlinable public var index: Int { position }

    /// The nesting depth of the value at the cursor: 0 for the document itself, one more inside each object or
    /// array. A value deeper than `options.maxDepth` is refused before it is looked at.
    @inlinable public var depth: Int { level }

    /// Reads one whole document (surrounding whitespace allowed): `body` reads or skips its value.
    @inlinable
    public static func read<Result>(
        _ bytes: UnsafeRawBufferPointer, options: Options, _ body: (inout JSONReader) throws(JSONSyntaxError) -> Result
    ) throws(JSONSyntaxError) -> Result {
        var reader = JSONReader(bytes, options: options)
        reader.skipWhitespace()
        let result = try body(&reader)
        reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.error("unexpected text after the value") }
        return result
    }

    /// Checks a whole document without reading anything out of it.
    @inlinable
    public static func validate(_ bytes: UnsafeRawBufferPointer, options: Options) throws(JSONSyntaxError) {
        try read(bytes, options: options) { (reader) throws(JSONSyntaxError) in try reader.skip() }
    }

    /// An error at the cursor. (Not inlined: only failures build one.)
    @usableFromInline
    func error(_ reason: String, tooDeep: Bool = false) -> JSONSyntaxError {
        JSONSyntaxError(offset: position, reason: reason, isTooDeep: tooDeep)
    }

    /// The byte at the cursor; nil at the end.
    @inlinable @inline(__always)
    public var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    @inlinable @inline(__always)
    public mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// What every value starts with: the depth limit, then that there is a value at all.
    @inlinable @inline(__always)
    func start() throws(JSONSyntaxError) -> UInt8 {
        guard level <= options.maxDepth else { throw tooDeep() }
        guard let byte = current else { throw error("unexpected end of line") }
        return byte
    }

    @usableFromInline
    func tooDeep() -> JSONSyntaxError {
        error("nested deeper than \(options.maxDepth) levels", tooDeep: true)
    }

    /// Reads the value at the cursor. An object's members go to `body` in order, each with its key; `body` must
    /// read or skip the member's value (with the reader it is given). Any other value is skipped. Returns the
    /// value's token either way, so a caller can tell what it was and read it again later.
    @inlinable
    @discardableResult
    public mutating func object(
        _ body: (inout JSONReader, Text) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) -> Token {
        guard try start() == UInt8(ascii: "{") else { return try token() }
        let begin = position
        position += 1
        level += 1
        skipWhitespace()
        if current != UInt8(ascii: "}") {
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                position += 1
                skipWhitespace()
                try body(&self, key)
                skipWhitespace()
                guard current == UInt8(ascii: ",") else { break }
                position += 1
            }
            guard current == UInt8(ascii: "}") else { throw error("expected ',' or '}' in an object") }
        }
        position += 1
        level -= 1
        return .object(nested(from: begin))
    }

    /// Reads the value at the cursor. An array's elements go to `body` in order, each with its position; `body`
    /// must read or skip the element. Any other value is skipped. Returns the value's token either way.
    @inlinable
    @discardableResult
    public mutating func array(
        _ body: (inout JSONReader, Int) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) -> Token {
        guard try start() == UInt8(ascii: "[") else { return try token() }
        let begin = position
        position += 1
        level += 1
        skipWhitespace()
        if current != UInt8(ascii: "]") {
            var element = 0
            while true {
                skipWhitespace()
                try body(&self, element)
                element += 1
                skipWhitespace()
                guard current == UInt8(ascii: ",") else { break }
                position += 1
            }
            guard current == UInt8(ascii: "]") else { throw error("expected ',' or ']' in an array") }
        }
        position += 1
        level -= 1
        return .array(nested(from: begin))
    }

    /// Skips the value at the cursor, checking all of it.
    @inlinable
    public mutating func skip() throws(JSONSyntaxError) {
        switch try start() {
        case UInt8(ascii: "{"): try object { (reader, _) throws(JSONSyntaxError) in try reader.skip() }
        case UInt8(ascii: "["): try array { (reader, _) throws(JSONSyntaxError) in try reader.skip() }
        default: _ = try token()
        }
    }

    /// The value at the cursor as it stands in the document: a string's or number's bytes, or an object's or
    /// array's bytes (checked, and skipped) to read again with `Nested.reader()`.
    @inlinable
    public mutating func token() throws(JSONSyntaxError) -> Token {
        switch try start() {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let begin = position
            try skip()
            return bytes[begin] == UInt8(ascii: "{") ? .object(nested(from: begin)) : .array(nested(from: begin))
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
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

    /// The bytes from `begin` to the cursor, as a value to read again at the depth it was found at.
    @inlinable
    func nested(from begin: Int) -> Nested {
        Nested(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<position]), depth: level)
    }

    /// Steps over `text` when the bytes at the cursor spell it exactly, and says whether they did: for a reader
    /// that expects a message's usual layout and reads it another way when it differs.
    @inlinable @inline(__always)
    package mutating func consume(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count,
              UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
                  .hasSameBytes(as: UnsafeRawBufferPointer(start: text.utf8Start, count: count))
        else { return false }
        position += count
        return true
    }

    @inlinable
    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        for offset in 0..<count {
            guard current == word.utf8Start[offset] else { throw error("expected '\(word)'") }
            position += 1
        }
    }

    /// `-?digits(.digits)?([eE][+-]?digits)?`, as its bytes. Leading zeros are refused only when reading
    /// strictly: the feeds read numbers by value, and their reader has always allowed them.
    @inlinable @inline(__always)
    mutating func number() throws(JSONSyntaxError) -> UnsafeRawBufferPointer {
        let begin = position
        if current == UInt8(ascii: "-") { position += 1 }
        let digits = position
        let count = skipDigits()
        guard count > 0 else { throw error("expected digits") }
        if count > 1, bytes[digits] == UInt8(ascii: "0"), options.strictness == .strict {
            position = digits + 1
            throw error("a number may not start with 0 followed by digits")
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard skipDigits() > 0 else { throw error("expected digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw error("expected exponent digits") }
        }
        return UnsafeRawBufferPointer(rebasing: bytes[begin..<position])
    }

    /// A number at the cursor written as plain digits, with at most one point and at most 18 digits in all
    /// (`64250.5`, `1575526691134`, as exchanges write prices and times): its digits as one whole number and how
    /// many of them follow the point, found in the same pass as its end, with the cursor after it. nil, with the
    /// cursor where it was, for any other text (a sign, an exponent, a 19th digit, a point without digits after it,
    /// a leading zero when reading strictly): `number()` reads those, and says what is wrong with a bad one.
    @inlinable @inline(__always)
    package mutating func plainDigits() -> (value: UInt64, fractionDigits: Int)? {
        let begin = position
        var value: UInt64 = 0
        var index = position
        Self.addDigits(bytes, &index, to: &value)
        let whole = index - begin
        guard whole > 0, whole <= 18 else { return nil }
        if whole > 1, bytes[begin] == UInt8(ascii: "0"), options.strictness == .strict { return nil }
        var fraction = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let first = index
            Self.addDigits(bytes, &index, to: &value)
            fraction = index - first
            guard fraction > 0, whole + fraction <= 18 else { return nil }
        }
        // Overflow is ruled out by the 18 digits; what follows must not continue the number.
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: ".") {
            return nil
        }
        position = index
        return (value, fraction)
    }

    /// Adds the run of digits at `index` to `value` (wrapping: a caller counting more than 18 digits throws the
    /// value away) and moves `index` past them. Eight digits at a time while eight are there: a time stamp or a
    /// long price is then two steps, not a chain of a dozen multiplications, each waiting for the last.
    @inlinable @inline(__always)
    static func addDigits(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, to value: inout UInt64) {
        while index &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let digits = word &- 0x3030_3030_3030_3030
            // Every byte a digit: each is 0x30...0x39, so its high half is 3 and adding 6 does not carry into it.
            guard (word & 0xF0F0_F0F0_F0F0_F0F0) | ((word &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4
                    == 0x3030_3030_3030_3030 | 0x0303_0303_0303_0303
            else { break }
            // Pairs, then fours, then all eight, the first digit (the lowest byte) the most significant.
            let pairs = (digits &* 10 &+ (digits >> 8)) & 0x00FF_00FF_00FF_00FF
            let fours = (pairs &* 100 &+ (pairs >> 16)) & 0x0000_FFFF_0000_FFFF
            let eight = (fours &* 10_000 &+ (fours >> 32)) & 0xFFFF_FFFF
            value = value &* 100_000_000 &+ eight
            index &+= 8
        }
        while index < bytes.count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit <= 9 {
            value = value &* 10 &+ UInt64(digit)
            index &+= 1
        }
    }

    @inlinable @inline(__always)
    mutating func skipDigits() -> Int {
        let begin = position
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
        return position - begin
    }
}
