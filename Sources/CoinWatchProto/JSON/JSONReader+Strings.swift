extension JSONReader {
    /// A string at the cursor (its opening quote), checked: its bytes between the quotes, and whether they hold
    /// an escape (only then does its text need decoding).
    @inlinable @inline(__always)
    package mutating func string() throws(JSONSyntaxError) -> Text {
        position += 1
        let begin = position
        // The common case, a string without escapes, is one scan to the closing quote, eight bytes at a time while
        // eight remain.
        while position &+ 8 <= bytes.count {
            let stop = Self.stopBytes(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
            guard stop == 0 else {
                position &+= stop.trailingZeroBitCount &>> 3
                break
            }
            position &+= 8
        }
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"),
              bytes[position] >= 0x20
        {
            position += 1
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            if options.strictness == .strict { try checkUTF8(from: begin, to: position) }
            position += 1
            return Text(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<(position - 1)]), escaped: false)
        }
        try escapedString(from: begin)
        return Text(bytes: UnsafeRawBufferPointer(rebasing: bytes[begin..<(position - 1)]), escaped: true)
    }

    /// The bytes of `word` (eight of a string, loaded little-endian) that end a plain run: a quote, a backslash or
    /// a control character, each marked by its top bit (`ByteWord`: the lowest mark is the first such byte).
    @inlinable @inline(__always)
    static func stopBytes(_ word: UInt64) -> UInt64 {
        ByteWord.equal(word, UInt8(ascii: "\"")) | ByteWord.equal(word, UInt8(ascii: "\\")) | ByteWord.below(word, 0x20)
    }

    /// The rest of a string that is not one plain run (an escape, a control character or its end lies ahead),
    /// up to and past its closing quote. Not inlined: escapes are rare in the messages read on hot paths.
    @usableFromInline
    mutating func escapedString(from begin: Int) throws(JSONSyntaxError) {
        while true {
            guard let byte = current else { throw error("unterminated string") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                if options.strictness == .strict { try checkUTF8(from: begin, to: position - 1) }
                return
            case UInt8(ascii: "\\"):
                guard let escaped = current else { throw error("unterminated escape") }
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    let scalar = try hexEscape()
                    if options.strictness == .strict { try checkSurrogate(scalar) }
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

    /// The four hex digits of a `\u` escape at the cursor, as a number. (The second half of a surrogate pair
    /// is an escape of its own, read the same way.)
    private mutating func hexEscape() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = current else { throw error("short \\u escape") }
            guard let nibble = Text.hexValue(digit) else { throw error("bad hex digit in \\u escape") }
            value = value << 4 | nibble
            position += 1
        }
        return value
    }

    /// Read strictly, a surrogate escape must be the high half of a pair whose low half follows it as the next
    /// escape: anything else names no character.
    private mutating func checkSurrogate(_ scalar: UInt32) throws(JSONSyntaxError) {
        if (0xDC00...0xDFFF).contains(scalar) { throw error("a low surrogate without a high one") }
        guard (0xD800...0xDBFF).contains(scalar) else { return }
        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
              bytes[position + 1] == UInt8(ascii: "u")
        else { throw error("a high surrogate must be followed by a low one") }
        position += 2
        guard (0xDC00...0xDFFF).contains(try hexEscape()) else {
            throw error("a high surrogate must be followed by a low one")
        }
    }

    /// Read strictly, a string's bytes between its quotes must be UTF-8; the error points at the first byte that
    /// is not. Escapes are ASCII, so the bytes can be checked as they stand.
    @usableFromInline
    func checkUTF8(from begin: Int, to end: Int) throws(JSONSyntaxError) {
        guard let problem = UTF8Check.firstProblem(bytes, from: begin, to: end) else { return }
        throw JSONSyntaxError(offset: begin + problem.offset, reason: "invalid UTF-8", isTooDeep: false)
    }
}
