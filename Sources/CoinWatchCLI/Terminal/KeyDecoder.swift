/// A key as the line editor and the dashboard see it.
enum Key: Sendable, Hashable {
    /// A printable character (UTF-8 decoded).
    case character(Character)
    case enter, tab, backspace, delete, escape
    case up, down, left, right, home, end
    /// Ctrl plus a letter, as the lowercase letter: `.control("a")` is Ctrl-A.
    case control(Character)
    /// Word-wise moves (Alt/Ctrl + arrows).
    case wordLeft, wordRight
    /// A sequence the CLI does not use.
    case unknown
}

/// Turns the bytes a terminal sends into keys.
///
/// Handles the escape sequences of xterm-like terminals in both cursor modes (`ESC [ A` and `ESC O A`),
/// the `ESC [ n ~` family (Home, End, Delete), and UTF-8 text. Bytes of a sequence may arrive split
/// over several reads: an incomplete tail is kept until more arrive (or `flush()` gives up on it).
struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    init() {}

    /// Whether bytes are held back waiting for the rest of a sequence.
    var hasPending: Bool { !pending.isEmpty }

    /// The keys the bytes complete.
    mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys = [Key]()
        var index = 0
        while index < pending.count {
            guard let (key, length) = Self.decode(pending[index...]) else { break }
            keys.append(key)
            index += length
        }
        pending.removeFirst(index)
        // A sequence longer than any real one is noise: give it up rather than hold input forever.
        if pending.count > 16 {
            pending.removeAll()
            keys.append(.unknown)
        }
        return keys
    }

    /// Gives up waiting for the rest of a sequence: a lone ESC is the Escape key.
    mutating func flush() -> [Key] {
        defer { pending.removeAll() }
        guard let first = pending.first else { return [] }
        return first == 0x1B && pending.count == 1 ? [.escape] : [.unknown]
    }

    /// The key at the start of `bytes` and how many bytes it took, or nil when more bytes are needed.
    static func decode(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let start = bytes.startIndex
        let byte = bytes[start]
        switch byte {
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x1B: return decodeEscape(bytes)
        case 0x01...0x1A: return (.control(Character(UnicodeScalar(byte + 0x60))), 1)
        case 0x00, 0x1C...0x1F: return (.unknown, 1)
        case 0x20...0x7E: return (.character(Character(UnicodeScalar(byte))), 1)
        default: return decodeUTF8(bytes)
        }
    }

    private static func decodeEscape(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let second = bytes[start + 1]
        switch second {
        case UInt8(ascii: "["):
            // CSI: parameters (digits and ';') then one final byte in 0x40...0x7E.
            var index = start + 2
            while index < bytes.endIndex, (0x30...0x3F).contains(bytes[index]) { index += 1 }
            guard index < bytes.endIndex else { return nil }
            let final = bytes[index]
            let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
            let length = index - start + 1
            let modified = parameters.contains(";")
            switch final {
            case UInt8(ascii: "A"): return (.up, length)
            case UInt8(ascii: "B"): return (.down, length)
            case UInt8(ascii: "C"): return (modified ? .wordRight : .right, length)
            case UInt8(ascii: "D"): return (modified ? .wordLeft : .left, length)
            case UInt8(ascii: "H"): return (.home, length)
            case UInt8(ascii: "F"): return (.end, length)
            case UInt8(ascii: "~"):
                switch parameters {
                case "1", "7": return (.home, length)
                case "4", "8": return (.end, length)
                case "3": return (.delete, length)
                default: return (.unknown, length)
                }
            default: return (.unknown, length)
            }
        case UInt8(ascii: "O"):
            guard bytes.count >= 3 else { return nil }
            switch bytes[start + 2] {
            case UInt8(ascii: "A"): return (.up, 3)
            case UInt8(ascii: "B"): return (.down, 3)
            case UInt8(ascii: "C"): return (.right, 3)
            case UInt8(ascii: "D"): return (.left, 3)
            case UInt8(ascii: "H"): return (.home, 3)
            case UInt8(ascii: "F"): return (.end, 3)
            default: return (.unknown, 3)
            }
        case UInt8(ascii: "b"): return (.wordLeft, 2)
        case UInt8(ascii: "f"): return (.wordRight, 2)
        case 0x7F: return (.control("w"), 2)
        case 0x1B: return (.escape, 1)
        default: return (.unknown, 2)
        }
    }

    private static func decodeUTF8(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let start = bytes.startIndex
        let byte = bytes[start]
        let length: Int
        switch byte {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return (.unknown, 1)
        }
        guard bytes.count >= length else { return nil }
        let sequence = bytes[start..<(start + length)]
        guard sequence.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }),
              let scalar = String(validating: sequence, as: UTF8.self)?.first else {
            return (.unknown, 1)
        }
        return (.character(scalar), length)
    }
}
