/// A traded asset's ticker, such as `BTC`.
///
/// Symbols are keys in storage, in the price hub and in the alert index, so one
/// asset must have one spelling: lowercase input is upper-cased, and anything
/// outside 2–10 characters of `A-Z 0-9` is refused.
public struct Symbol: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    static let rule = "must be 2–10 characters of A-Z 0-9"

    public init(validating text: String, field: String = "symbol") throws(ValidationError) {
        // Nearly every symbol arrives canonical already: keep the caller's string rather than building another.
        if Self.isCanonical(text) {
            self.rawValue = text
            return
        }
        var out = [UInt8]()
        out.reserveCapacity(10)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(byte)
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                out.append(byte - 32)
            default:
                throw ValidationError(field: field, rule: Self.rule + " (got '\(text)')")
            }
            if out.count > 10 { break }
        }
        guard (2...10).contains(out.count) else {
            throw ValidationError(field: field, rule: Self.rule + " (got '\(text)')")
        }
        self.rawValue = String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` is 2–10 characters of `A-Z 0-9`, that is, a symbol's own spelling.
    private static func isCanonical(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            guard byte &- UInt8(ascii: "A") < 26 || byte &- UInt8(ascii: "0") < 10, count < 10 else { return false }
            count += 1
        }
        return count >= 2
    }

    public var description: String { rawValue }

    public static func < (lhs: Symbol, rhs: Symbol) -> Bool { lhs.rawValue < rhs.rawValue }
}
