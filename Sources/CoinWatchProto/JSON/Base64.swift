/// Base64 (RFC 4648) for the JSON mapping of `bytes` fields.
///
/// Writes the standard alphabet with padding; reads both the standard and the URL-safe alphabet, with or without
/// padding, as the proto3 JSON mapping asks of a parser. Anything else (a stray character, padding in the middle,
/// non-zero bits after the last whole byte) is refused rather than guessed at.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The 6-bit value of each byte, 0xFF for bytes outside both alphabets.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Appends the standard, padded encoding of `bytes` to `out`.
    static func encode(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 0x3F)])
            out.append(alphabet[Int(chunk >> 12 & 0x3F)])
            out.append(alphabet[Int(chunk >> 6 & 0x3F)])
            out.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out.append(alphabet[Int(chunk >> 18 & 0x3F)])
            out.append(alphabet[Int(chunk >> 12 & 0x3F)])
            out.append(rest == 2 ? alphabet[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
    }

    /// Decodes standard or URL-safe base64, padded or not; nil when `text` is not base64.
    static func decode<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        var digits = Array(text)
        // Padding only at the end, only as much as completes a 4-character group.
        var padding = 0
        while let last = digits.last, last == UInt8(ascii: "=") {
            digits.removeLast()
            padding += 1
        }
        guard padding <= 2, padding == 0 || (digits.count + padding) % 4 == 0, digits.count % 4 != 1 else {
            return nil
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for digit in digits {
            let value = values[Int(digit)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // The leftover bits of a partial group must be zero, so every byte string has one encoding.
        guard accumulator == 0 else { return nil }
        return out
    }
}
