/// Hex digits and UUIDs as text, in the lowercase form CoinWatch stores: one rule for device ids, APNs tokens and
/// the apns-id made from an alert's id.
public enum HexText {
    /// `byte` as a lowercase hex digit (`A`–`F` lowered), or nil when it is not a hex digit.
    @inline(__always)
    public static func lowercaseDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
            byte
        case UInt8(ascii: "A")...UInt8(ascii: "F"):
            byte + 32
        default:
            nil
        }
    }

    /// `8-4-4-4-12` hex digits separated by `-` or `_`, in any case → lowercase with `-`; nil for anything else.
    public static func canonicalUUID(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 36 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") else { return nil }
                out.append(UInt8(ascii: "-"))
            } else {
                guard let digit = lowercaseDigit(byte) else { return nil }
                out.append(digit)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
