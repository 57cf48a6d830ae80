public import CoinWatchCore

/// Decimal text: how prices are typed at a terminal and shown in JSON.
///
/// Parsing never goes through `Double`: `"64250.5"` becomes mantissa 642505 at
/// scale 1 exactly. Exponents, thousands separators, `nan` and `inf` are refused
/// because a person typing a price threshold never means them.
extension ExactDecimal: CustomStringConvertible, LosslessStringConvertible {
    /// Parses `[+-]digits[.digits]`; `nil` for anything else or out of range.
    public init?(_ text: String) {
        guard let value = try? ExactDecimal(parsing: text) else { return nil }
        self = value
    }

    /// Parses decimal text, explaining what is wrong when it cannot.
    public init(parsing text: String) throws(DecimalParseError) {
        var text = text
        let parsed = text.withUTF8 { utf8 in
            Result { () throws(DecimalParseError) in try ExactDecimal(parsingUTF8: UnsafeRawBufferPointer(utf8)) }
        }
        self = try parsed.get()
    }

    /// Parses decimal text from its UTF-8 bytes: the one parser behind `init(parsing:)`, for readers that hold a
    /// message's bytes rather than a `String` (a venue's price goes from its bytes into a decimal with no copy).
    /// The error, which is rare, is the only thing that makes a `String`.
    public init(parsingUTF8 bytes: UnsafeRawBufferPointer) throws(DecimalParseError) {
        func problem(_ reason: String) -> DecimalParseError {
            DecimalParseError(text: String(decoding: bytes, as: UTF8.self), reason: reason)
        }
        var index = 0
        var negative = false
        if !bytes.isEmpty, bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count else { throw problem("no digits") }
        var mantissa: Int64 = 0
        var scale = 0
        var seenPoint = false
        var digits = 0
        // By index, not through a slice's iterator: a price is read per trade, and this stays a plain loop in any
        // build.
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { throw problem("more than one decimal point") }
                seenPoint = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw problem("only digits and one decimal point are allowed")
            }
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, o1) = mantissa.multipliedReportingOverflow(by: 10)
            let (next, o2) = shifted.addingReportingOverflow(negative ? -digit : digit)
            guard !o1, !o2 else { throw problem("too many digits") }
            mantissa = next
            digits += 1
            if seenPoint { scale += 1 }
        }
        guard digits > 0 else { throw problem("no digits") }
        guard let value = ExactDecimal(mantissa: mantissa, scale: scale) else {
            throw problem("more than \(ExactDecimal.maxScale) digits after the point")
        }
        self = value
    }

    /// Plain decimal text with no exponent and no trailing zeros: `64250.5`, `-0.001`, `7`.
    public var description: String {
        let magnitude = mantissa.magnitude
        var digits = String(magnitude)
        if scale > 0 {
            if digits.count <= scale {
                digits = String(repeating: "0", count: scale - digits.count + 1) + digits
            }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -scale))
        }
        return mantissa < 0 ? "-" + digits : digits
    }
}

/// Why a piece of text is not a decimal number.
public struct DecimalParseError: CoinWatchError {
    /// The one kind of parse error: `reason` says what is wrong.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The text is not a plain decimal number.
        public static let notADecimal = Code("notADecimal")
    }

    /// The text that was refused.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    public init(text: String, reason: String) {
        self.text = text
        self.reason = reason
    }

    public var code: Code { .notADecimal }

    public var message: String { "'\(text)' is not a decimal number: \(reason)" }

    public var description: String { message }
}
