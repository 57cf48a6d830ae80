/// How many terminal columns text takes: what a cursor position is counted in.
///
/// Most characters take one column; East Asian wide and fullwidth characters and emoji shown as emoji take two
/// (Unicode's East_Asian_Width W and F, and Emoji_Presentation, as terminals draw them); a character is one
/// grapheme cluster, so combining marks take none of their own. The wide ranges are the blocks `wcwidth`
/// implementations treat as wide; the standard library has no East Asian width property.
enum TerminalColumns {
    /// Columns `character` takes: 1 or 2.
    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first, first.value >= 0x1100 else { return 1 }
        if first.properties.isEmojiPresentation { return 2 }
        // An emoji character made to present as emoji (VS16, U+FE0F) is drawn wide as well.
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        return isWide(first.value) ? 2 : 1
    }

    /// Columns `text` takes.
    static func width(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}
