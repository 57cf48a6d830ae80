/// Base64 (RFC 4648 §4) and base64url (RFC 4648 §5), strict both ways.
///
/// `encode` writes standard base64 with padding (the form `Sec-WebSocket-Key`/`-Accept` and PEM use);
/// `encodeURL` writes base64url without padding (the form JWS, and so JWT, requires: RFC 7515 §2). Decoding
/// accepts only what the matching encoder writes: no whitespace, no characters of the other alphabet, padding
/// exactly where §4 puts it (and none for base64url), and zero bits after the last byte, so every text decodes
/// to one value and every value has one text — what a signature over the text needs. The one exception is
/// `decodeEitherAlphabet`, for the proto3 JSON mapping of `bytes`, which the mapping asks to read either alphabet,
/// padded or not (still refusing stray characters, padding in the middle and non-zero bits after the last byte).
/// Pure Swift, so every layer (the JSON mapping, TLS's JWTs, the WebSocket handshake, credentials) shares it.
public enum Base64 {
    /// Standard base64 with `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: standardAlphabet, padding: true)
    }

    /// Base64url without padding.
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: urlAlphabet, padding: false)
    }

    /// The bytes of standard, padded base64 `text`; nil if it is not exactly that.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var end = characters.count
        while end > 0, characters.count - end < 2, characters[end - 1] == UInt8(ascii: "=") { end -= 1 }
        // Padding only completes the last group: 2 or 3 characters left in it, never 1 (or 0, which needs none).
        if end < characters.count, end % 4 < 2 { return nil }
        return decode(characters[..<end], values: standardValues)
    }

    /// Appends the standard, padded encoding of `bytes` to `out` (writers that build a byte buffer).
    public static func encode(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        out += encode(bytes, alphabet: standardAlphabet, padding: true).utf8
    }

    /// The bytes of standard or URL-safe base64 `text`, padded or not (characters of both alphabets accepted); nil
    /// if it is not base64. The proto3 JSON mapping's reading of `bytes`.
    public static func decodeEitherAlphabet(_ text: some Collection<UInt8>) -> [UInt8]? {
        var characters = Array(text)[...]
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters = characters.dropLast()
            padding += 1
        }
        // Padding only at the end, only as much as completes a 4-character group.
        guard padding <= 2, padding == 0 || (characters.count + padding) % 4 == 0 else { return nil }
        return decode(characters, values: eitherValues)
    }

    /// The bytes of unpadded base64url `text`; nil if it is not exactly that.
    public static func decodeURL(_ text: some StringProtocol) -> [UInt8]? {
        decode(Array(text.utf8)[...], values: urlValues)
    }

    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's 6-bit value in the alphabet, 0xFF for a byte outside it.
    private static let standardValues = values(of: standardAlphabet)
    private static let urlValues = values(of: urlAlphabet)
    private static let eitherValues = zip(standardValues, urlValues).map { $0 == 0xFF ? $1 : $0 }

    private static func values(of alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    private static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], padding: Bool) -> String {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        let left = input.count - index
        if left > 0 {
            var group = UInt32(input[index]) << 16
            if left == 2 { group |= UInt32(input[index + 1]) << 8 }
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if left == 2 { output.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if padding { output += Array(repeating: UInt8(ascii: "="), count: 3 - left) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded characters; nil on a character outside the alphabet, a lone last character, or non-zero
    /// bits after the last whole byte.
    private static func decode(_ characters: ArraySlice<UInt8>, values: [UInt8]) -> [UInt8]? {
        guard characters.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(characters.count / 4 * 3 + 2)
        var group: UInt32 = 0
        var count = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output += [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
                group = 0
                count = 0
            }
        }
        switch count {
        case 2:  // 12 bits: one byte and 4 bits that must be zero
            guard group & 0xF == 0 else { return nil }
            output.append(UInt8(group >> 4))
        case 3:  // 18 bits: two bytes and 2 bits that must be zero
            guard group & 0x3 == 0 else { return nil }
            output += [UInt8(group >> 10 & 0xFF), UInt8(group >> 2 & 0xFF)]
        default:
            break
        }
        return output
    }
}
