/// UTF-8 validation of raw bytes, with NUL reported apart.
///
/// Follows the Unicode definition of well-formed UTF-8 (Table 3-7): no overlong forms, no surrogates, nothing
/// above U+10FFFF. ASCII runs are checked eight bytes at a time because strings on the hot path (methods,
/// symbols, ids) are ASCII.
enum UTF8Check {
    struct Problem {
        /// Offset from the start of the string.
        let offset: Int
        /// A U+0000 rather than malformed UTF-8.
        let isNUL: Bool
    }

    static func firstProblem(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Problem? {
        precondition(start >= 0 && start <= end && end <= bytes.count)
        var index = start
        while index < end {
            if end - index >= 8 {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let highBits: UInt64 = 0x8080_8080_8080_8080
                // No byte >= 0x80 and no zero byte.
                if word & highBits == 0, ByteWord.zeros(word) == 0 {
                    index += 8
                    continue
                }
            }
            let lead = bytes[index]
            if lead < 0x80 {
                if lead == 0 {
                    return Problem(offset: index - start, isNUL: true)
                }
                index += 1
                continue
            }
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            let continuation: Int
            switch lead {
            case 0xC2...0xDF: continuation = 1
            case 0xE0: continuation = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
            case 0xED: continuation = 2; high = 0x9F
            case 0xF0: continuation = 3; low = 0x90
            case 0xF1...0xF3: continuation = 3
            case 0xF4: continuation = 3; high = 0x8F
            default: return Problem(offset: index - start, isNUL: false)
            }
            guard end - index > continuation else {
                return Problem(offset: index - start, isNUL: false)
            }
            let second = bytes[index + 1]
            guard second >= low, second <= high else {
                return Problem(offset: index - start, isNUL: false)
            }
            var k = 2
            while k <= continuation {
                guard bytes[index + k] & 0xC0 == 0x80 else {
                    return Problem(offset: index - start, isNUL: false)
                }
                k += 1
            }
            index += continuation + 1
        }
        return nil
    }
}
