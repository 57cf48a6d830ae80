extension JSONReader {
    /// A value as it stands in a document, pointing into the document's bytes (valid as long as they are).
    public enum Token {
        case string(Text)
        /// The number exactly as written.
        case number(UnsafeRawBufferPointer)
        case bool(Bool)
        case null
        case object(Nested)
        case array(Nested)

        @inlinable
        public var text: Text? {
            if case .string(let text) = self { return text }
            return nil
        }

        /// Calls `body` with the bytes of a number, or of a string holding one (exchanges quote prices both ways);
        /// nil for any other value.
        @inlinable
        public func withNumberText<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
            switch self {
            case .number(let bytes): body(bytes)
            case .string(let text): text.withUTF8(body)
            default: nil
            }
        }

        /// The text of a number, or of a string holding one: for messages that quote it.
        public var numberText: String? { withNumberText { String(decoding: $0, as: UTF8.self) } }
    }

    /// An object or array inside a document, checked already, to read again.
    ///
    /// It keeps no rules: whatever rules it was read by, it passed them, so reading it again leniently and without
    /// a depth limit reads it the same. (Keeping them would make every token larger, and tokens are what a venue's
    /// reader copies about.)
    public struct Nested {
        /// From its opening to its closing bracket.
        public let bytes: UnsafeRawBufferPointer
        public let depth: Int

        @inlinable
        init(bytes: UnsafeRawBufferPointer, depth: Int) { (self.bytes, self.depth) = (bytes, depth) }

        /// A reader at its opening bracket.
        @inlinable
        public func reader() -> JSONReader { JSONReader(bytes, options: .lenient(maxDepth: .max), depth: depth) }
    }

    /// A string (or key) as it stands in a document: the bytes between its quotes.
    public struct Text {
        public let bytes: UnsafeRawBufferPointer
        /// Whether the bytes hold an escape, so that the string's text differs from them.
        public let escaped: Bool

        @inlinable
        init(bytes: UnsafeRawBufferPointer, escaped: Bool) { (self.bytes, self.escaped) = (bytes, escaped) }

        @inlinable
        public var string: String { escaped ? decoded() : String(decoding: bytes, as: UTF8.self) }

        @inlinable
        public var isEmpty: Bool { bytes.isEmpty }

        /// Calls `body` with the string's UTF-8: its bytes as they stand, or (with an escape) its decoded text.
        @inlinable
        public func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            guard escaped else { return body(bytes) }
            var text = decoded()
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }

        /// Whether the string is `word`: compared as bytes, without making a `String` unless it holds an escape.
        @inlinable @inline(__always)
        public static func == (text: Text, word: StaticString) -> Bool {
            guard !text.escaped else { return text.decoded() == word.description }
            return word.withUTF8Buffer { expected in
                guard expected.count == text.bytes.count else { return false }
                for offset in 0..<expected.count where expected[offset] != text.bytes[offset] {
                    return false
                }
                return true
            }
        }

        /// So that keys and values can be switched over: `case "trade":`.
        @inlinable @inline(__always)
        public static func ~= (word: StaticString, text: Text) -> Bool { text == word }

        static func hexValue(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// The text of a string with escapes (checked by the reader already). A `\u` escape of an unpaired
        /// surrogate becomes U+FFFD (only a lenient reader lets one through); a high surrogate followed by another
        /// `\u` escape takes that escape as its low half, and both become U+FFFD when it is not one.
        @usableFromInline
        func decoded() -> String {
            var utf8: [UInt8] = []
            utf8.reserveCapacity(bytes.count)
            var index = 0
            func hex4() -> UInt32 {
                var value: UInt32 = 0
                for _ in 0..<4 {
                    value = value << 4 | (Text.hexValue(bytes[index]) ?? 0)
                    index += 1
                }
                return value
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                guard byte == UInt8(ascii: "\\") else {
                    utf8.append(byte)
                    continue
                }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = hex4()
                    if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                       bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                    }
                    let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                    utf8.append(contentsOf: String(character).utf8)
                default:
                    // `"`, `\` and `/` stand for themselves.
                    utf8.append(escaped)
                }
            }
            return String(decoding: utf8, as: UTF8.self)
        }
    }
}
