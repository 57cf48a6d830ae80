/// A line of text in parts, each with an optional SGR style, that can be cut to a width.
///
/// Escape sequences take no room on screen, so truncation has to count only the visible characters;
/// keeping the style apart from the text makes that exact. Every character counts one column, which
/// holds for the ASCII, box and block characters the CLI draws.
struct StyledLine: Sendable, Hashable {
    struct Segment: Sendable, Hashable {
        var text: String
        var style: String?
    }

    private(set) var segments: [Segment] = []

    init(_ text: String = "", style: String? = nil) {
        if !text.isEmpty { segments.append(Segment(text: text, style: style)) }
    }

    mutating func append(_ text: String, style: String? = nil) {
        guard !text.isEmpty else { return }
        segments.append(Segment(text: text, style: style))
    }

    /// Pads with spaces up to `width` visible characters.
    mutating func pad(to width: Int) {
        let missing = width - self.width
        if missing > 0 { append(String(repeating: " ", count: missing)) }
    }

    /// Visible characters.
    var width: Int { segments.reduce(0) { $0 + $1.text.count } }

    /// The plain text, without styles.
    var plain: String { segments.map(\.text).joined() }

    /// At most `width` visible characters, styled when `color` is on (each style reset after its part).
    func render(width: Int, color: Bool) -> String {
        var out = ""
        var room = max(0, width)
        for segment in segments where room > 0 {
            let text = segment.text.count > room ? String(segment.text.prefix(room)) : segment.text
            room -= text.count
            if color, let style = segment.style {
                out += style + text + ANSI.reset
            } else {
                out += text
            }
        }
        return out
    }
}

/// Whole-screen frames drawn in place.
enum Screen {
    /// The escape text that draws `lines` from the top-left corner, clearing what each line does not
    /// cover and everything below, without scrolling (no newline after the last line).
    static func frame(_ lines: [String]) -> String {
        ANSI.home + lines.map { $0 + ANSI.clearToEndOfLine }.joined(separator: "\r\n") + ANSI.clearToEndOfScreen
    }

    /// Whether to colour output: not when `NO_COLOR` is set (no-color.org) or the terminal is `dumb`.
    static func colorEnabled(environment: [String: String]) -> Bool {
        environment["NO_COLOR"].map(\.isEmpty) ?? true && environment["TERM"] != "dumb"
    }
}
