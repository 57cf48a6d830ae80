/// A device's identity, in the one canonical form used as its storage key.
///
/// The original app identified a device by its vendor UUID, sent lowercased
/// with `_` in place of `-`. Other callers send the usual upper- or lowercase
/// UUID text. All of these name the same device, so every UUID-shaped id is
/// normalised to lowercase with `-` separators; any other id is kept verbatim.
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The canonical text.
    public let rawValue: String

    public static let maxLength = 128
    static let rule = "must be 1–128 characters of A-Z a-z 0-9 . _ : -"

    /// Validates and normalises `text`.
    public init(validating text: String, field: String = "device_id") throws(ValidationError) {
        // Most ids arrive canonical already (every id that is not UUID-shaped is): keep the caller's string.
        let isCanonical = text.utf8.withContiguousStorageIfAvailable { Self.isCanonical(utf8: UnsafeRawBufferPointer($0)) }
        if isCanonical == true {
            self.rawValue = text
            return
        }
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxLength else {
            throw ValidationError(field: field, rule: Self.rule + " (got \(text.count) characters)")
        }
        for byte in bytes where !Self.isAllowed(byte) {
            throw ValidationError(field: field, rule: Self.rule + " (found \(Self.describe(byte)))")
        }
        self.rawValue = HexText.canonicalUUID(bytes) ?? text
    }

    public var description: String { rawValue }

    /// Whether `utf8` is a valid device id already in canonical form, that is, whether
    /// `init(validating:)` would accept it and keep it verbatim. Lets a hot read path use
    /// a request's bytes as they are, without building a `DeviceID`; for any other input
    /// (including every invalid one) it is false and the caller validates as usual.
    public static func isCanonical(utf8: UnsafeRawBufferPointer) -> Bool {
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        for byte in utf8 where !isAllowed(byte) { return false }
        guard utf8.count == 36 else { return true }
        // A UUID's canonical form is lowercase with `-`; an id not shaped like a UUID is kept as is.
        var isLowercaseUUID = true
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                if byte == UInt8(ascii: "-") { continue }
                if byte == UInt8(ascii: "_") { isLowercaseUUID = false; continue }
                return true
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                isLowercaseUUID = false
            default:
                return true
            }
        }
        return isLowercaseUUID
    }

    /// Whether the id is a UUID (whose canonical form is `8-4-4-4-12` lowercase hex).
    public var isUUID: Bool { HexText.canonicalUUID(Array(rawValue.utf8)) == rawValue }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { lhs.rawValue < rhs.rawValue }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: ":"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }
}
