import CoinWatchCommandLine

/// Splits a shell line into words the way a POSIX shell would for simple commands: blanks separate
/// words, '…' quotes literally, "…" quotes with backslash escapes, and a backslash outside quotes
/// escapes the next character.
enum ShellWords {
    static func split(_ line: String) throws(UsageError) -> [String] {
        var words = [String]()
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                current.append(character)
            case ("\"", "\\"), (nil, "\\"):
                escaped = true
                inWord = true
            case ("\"", _):
                current.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, " "), (nil, "\t"):
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if let quote { throw UsageError("unterminated \(quote) quote") }
        if escaped { throw UsageError("a line cannot end with a backslash") }
        if inWord { words.append(current) }
        return words
    }
}
