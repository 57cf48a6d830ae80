extension TradeJSON {
    /// A pull reader over one message's UTF-8 bytes: the only JSON tokenizer of the feeds.
    ///
    /// It builds nothing. A reader of a venue's format walks an object's members with `object(_:)`, compares each
    /// key as bytes, takes the values it needs as `Token`s (a string's or number's bytes where they stand) and
    /// skips the rest, so a trade message is read without an allocation. Skipping still checks a value completely:
    /// a message is refused for any syntax error wherever it is, with the same column and reason whichever reader
    /// walks it, and `read(_:_:)` refuses text after the value. Strings are checked for control characters and
    /// escapes; the bytes are taken to be UTF-8 already (the WebSocket client and the replay's file reader check
    /// that).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        private(set) var index = 0
        /// The nesting depth of the value at the cursor: 0 for the message itself, one more inside each object or
        /// array. A value deeper than `maxDepth` is refused before it is looked at.
        private(set) var depth: Int

        init(_ bytes: UnsafeRawBufferPointer, depth: Int = 0) {
            self.bytes = bytes
            self.depth = depth
        }

        /// Reads one whole message (surrounding whitespace allowed): `body` reads or skips its value.
        static func read<Result>(
            _ bytes: UnsafeRawBufferPointer, _ body: (inout Reader) throws(SyntaxError) -> Result
        ) throws(SyntaxError) -> Result {
            var reader = Reader(bytes)
            reader.skipWhitespace()
            let result = try body(&reader)
            reader.skipWhitespace()
            guard reader.index == bytes.count else { throw reader.error("unexpected text after the value") }
            return result
        }

        /// Checks a whole message without reading anything out of it.
        static func validate(_ bytes: UnsafeRawBufferPointer) throws(SyntaxError) {
            try read(bytes) { (reader) throws(SyntaxError) in try reader.skip() }
        }

        func error(_ reason: String) -> SyntaxError {
            SyntaxError(column: index + 1, reason: reason)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// What every value starts with: the depth limit, then that there is a value at all.
        private func start() throws(SyntaxError) -> UInt8 {
            guard depth <= TradeJSON.maxDepth else { throw error("nested deeper than \(TradeJSON.maxDepth) levels") }
            guard let byte = current else { throw error("unexpected end of line") }
            return byte
        }

        /// Reads the value at the cursor. An object's members go to `body` in order, each with its key; `body` must
        /// read or skip the member's value (with the reader it is given). Any other value is skipped. Returns the
        /// value's token either way, so a caller can tell what it was and read it again later.
        @discardableResult
        mutating func object(
            _ body: (inout Reader, Text) throws(SyntaxError) -> Void
        ) throws(SyntaxError) -> Token {
            guard try start() == UInt8(ascii: "{") else { return try token() }
            let begin = index
            index += 1
            depth += 1
            skipWhitespace()
            if current != UInt8(ascii: "}") {
                while true {
                    skipWhitespace()
                    guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                    let key = try string()
                    skipWhitespace()
                    guard current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                    index += 1
                    skipWhitespace()
                    try body(&self, key)
                    skipWhitespace()
                    guard current == UInt8(ascii: ",") else { break }
                    index += 1
                }
                guard current == UInt8(ascii: "}") else { throw error("expected ',' or '}' in an object") }
            }
            index += 1
            depth -= 1
            return .object(nested(from: begin))
        }

        /// Reads the value at the cursor. An array's elements go to `body` in order, each with its position; `body`
        /// must read or skip the element. Any other value is skipped. Returns the value's token either way.
        @discardableResult
        mutating func array(
            _ body: (inout Reader, Int) throws(SyntaxError) -> Void
        ) throws(SyntaxError) -> Token {
            guard try start() == UInt8(ascii: "[") else { return try token() }
            let begin = index
            index += 1
            depth += 1
            skipWhitespace()
            if current != UInt8(ascii: "]") {
                var position = 0
                while true {
                    skipWhitespace()
                    try body(&self, position)
                    position += 1
                    skipWhitespace()
                    guard current == UInt8(ascii: ",") else { break }
                    index += 1
                }
                guard current == UInt8(ascii: "]") else { throw error("expected ',' or ']' in an array") }
            }
            index += 1
            depth -= 1
            return .array(nested(from: begin))
        }

        /// Skips the value at the cursor, checking all of it.
        mutating func skip() throws(SyntaxError) {
            switch try start() {
            case UInt8(ascii: "{"): try object { (reader, _) throws(SyntaxError) in try reader.skip() }
            case UInt8(ascii: "["): try array { (reader, _) throws(SyntaxError) in try reader.skip() }
            default: _ = try token()
            }
        }

        /// The value at the cursor as it stands in the message: a string's or number's bytes, or an object's or
        /// array's bytes (checked, and skipped) to read again with `Nested.reader()`.
        mutating func token() throws(SyntaxError) -> Token {
            switch try start() {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let begin = index
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
        private func nested(from begin: Int) -> Nested {
            Nested(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<index]), depth: depth)
        }

        private mutating func literal(_ word: StaticString) throws(SyntaxError) {
            let count = word.utf8CodeUnitCount
            for offset in 0..<count {
                guard current == word.utf8Start[offset] else { throw error("expected '\(word)'") }
                index += 1
            }
        }

        /// `-?digits(.digits)?([eE][+-]?digits)?`, as its bytes. (Leading zeros are taken: venues' numbers are
        /// read by value, and the reader has always allowed them.)
        private mutating func number() throws(SyntaxError) -> UnsafeRawBufferPointer {
            let begin = index
            if current == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw error("expected digits") }
            if current == UInt8(ascii: ".") {
                index += 1
                guard skipDigits() > 0 else { throw error("expected digits after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard skipDigits() > 0 else { throw error("expected exponent digits") }
            }
            return UnsafeRawBufferPointer(rebasing: bytes[begin..<index])
        }

        private mutating func skipDigits() -> Int {
            let begin = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index - begin
        }

        /// A string at the cursor (its opening quote), checked: its bytes between the quotes, and whether they
        /// hold an escape (only then does its text need decoding).
        private mutating func string() throws(SyntaxError) -> Text {
            index += 1
            let begin = index
            // The common case, a string without escapes, is one scan to the closing quote.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
                  bytes[index] >= 0x20
            {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return Text(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<(index - 1)]), escaped: false)
            }
            while true {
                guard let byte = current else { throw error("unterminated string") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return Text(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<(index - 1)]), escaped: true)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { throw error("unterminated escape") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    case UInt8(ascii: "u"):
                        // The second half of a surrogate pair is an escape of its own, checked the same way.
                        for _ in 0..<4 {
                            guard let digit = current else { throw error("short \\u escape") }
                            guard Text.hexValue(digit) != nil else { throw error("bad hex digit in \\u escape") }
                            index += 1
                        }
                    default:
                        throw error("unknown escape")
                    }
                case 0x00..<0x20:
                    throw error("control character in a string")
                default:
                    break
                }
            }
        }
    }
}
