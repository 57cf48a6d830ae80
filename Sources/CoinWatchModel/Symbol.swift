/// A traded asset's ticker, such as `BTC`.
///
/// Symbols are keys in storage, in the price hub and in the alert index, so one
/// asset must have one spelling: lowercase input is upper-cased, and anything
/// outside 2–10 characters of `A-Z 0-9` is refused.
public struct Symbol: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    static let rule = "must be 2–10 characters of A-Z 0-9"

    public init(validating text: String, field: String = "symbol") throws(ValidationError) {
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

    public var description: String { rawValue }

    public static func < (lhs: Symbol, rhs: Symbol) -> Bool { lhs.rawValue < rhs.rawValue }
}
