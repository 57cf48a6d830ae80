/// The editing state of one input line: text, cursor, history walk and the cut buffer.
///
/// A pure state machine driven by `Key`s: it knows nothing of terminals, so every editing rule is
/// tested without one, and `LineEditorView` draws it. Keys follow readline/emacs conventions, which
/// people's fingers already know from bash.
struct LineEditor: Sendable {
    /// What the caller should do after a key.
    enum Action: Sendable, Hashable {
        /// Nothing visible changed.
        case none
        /// The line or cursor changed: redraw.
        case edited
        /// Enter: run this line.
        case submit(String)
        /// Ctrl-D on an empty line: leave.
        case endOfInput
        /// Ctrl-C: drop the line and start a fresh one.
        case cancel
        /// Tab: complete the word at the cursor.
        case complete
        /// Ctrl-L.
        case clearScreen
        /// The key cannot do anything here (e.g. Up at the oldest entry).
        case bell
    }

    private(set) var characters: [Character] = []
    /// Position in `characters`, 0...count.
    private(set) var cursor = 0
    private(set) var history: [String]
    /// Which history entry is shown; `history.count` is the line being typed.
    private var historyIndex: Int
    /// The line being typed, kept while walking the history.
    private var draft: [Character] = []
    /// What the last Ctrl-K/U/W cut, for Ctrl-Y.
    private var cut: [Character] = []

    init(history: [String] = []) {
        self.history = history
        historyIndex = history.count
    }

    var text: String { String(characters) }

    /// Starts a new, empty line (history and cut buffer stay).
    mutating func startLine() {
        characters = []
        cursor = 0
        draft = []
        historyIndex = history.count
    }

    /// Adds an entry to the end of the history (not repeating the last one); keeps at most `limit`.
    mutating func remember(_ entry: String, limit: Int = HistoryFile.defaultLimit) {
        guard !entry.isEmpty, history.last != entry else { return }
        history.append(entry)
        if history.count > limit { history.removeFirst(history.count - limit) }
        historyIndex = history.count
    }

    /// Replaces `range` of the line (a word being completed) and puts the cursor after the new text.
    mutating func replace(_ range: Range<Int>, with replacement: String) {
        let clamped = max(0, min(range.lowerBound, characters.count))..<max(0, min(range.upperBound, characters.count))
        characters.replaceSubrange(clamped, with: Array(replacement))
        cursor = clamped.lowerBound + replacement.count
    }

    mutating func handle(_ key: Key) -> Action {
        switch key {
        case .character(let character):
            characters.insert(character, at: cursor)
            cursor += 1
            return .edited
        case .enter:
            return .submit(text)
        case .tab:
            return .complete
        case .backspace:
            guard cursor > 0 else { return .bell }
            cursor -= 1
            characters.remove(at: cursor)
            return .edited
        case .delete:
            guard cursor < characters.count else { return .bell }
            characters.remove(at: cursor)
            return .edited
        case .control("d"):
            if characters.isEmpty { return .endOfInput }
            return handle(.delete)
        case .left, .control("b"):
            guard cursor > 0 else { return .bell }
            cursor -= 1
            return .edited
        case .right, .control("f"):
            guard cursor < characters.count else { return .bell }
            cursor += 1
            return .edited
        case .home, .control("a"):
            cursor = 0
            return .edited
        case .end, .control("e"):
            cursor = characters.count
            return .edited
        case .wordLeft:
            cursor = previousWordStart()
            return .edited
        case .wordRight:
            cursor = nextWordEnd()
            return .edited
        case .control("k"):
            cut = Array(characters[cursor...])
            characters.removeSubrange(cursor...)
            return .edited
        case .control("u"):
            cut = Array(characters[..<cursor])
            characters.removeSubrange(..<cursor)
            cursor = 0
            return .edited
        case .control("w"):
            let start = previousWordStart()
            guard start < cursor else { return .bell }
            cut = Array(characters[start..<cursor])
            characters.removeSubrange(start..<cursor)
            cursor = start
            return .edited
        case .control("y"):
            guard !cut.isEmpty else { return .bell }
            characters.insert(contentsOf: cut, at: cursor)
            cursor += cut.count
            return .edited
        case .up, .control("p"):
            return showHistory(historyIndex - 1)
        case .down, .control("n"):
            return showHistory(historyIndex + 1)
        case .control("c"):
            return .cancel
        case .control("l"):
            return .clearScreen
        default:
            return .none
        }
    }

    /// Shows history entry `index` (`history.count` = the draft), keeping the draft while away from it.
    private mutating func showHistory(_ index: Int) -> Action {
        guard index >= 0, index <= history.count, index != historyIndex else { return .bell }
        if historyIndex == history.count { draft = characters }
        historyIndex = index
        characters = index == history.count ? draft : Array(history[index])
        cursor = characters.count
        return .edited
    }

    /// Start of the word before the cursor (skipping blanks first), as Ctrl-W and Alt-B see words.
    private func previousWordStart() -> Int {
        var index = cursor
        while index > 0 && characters[index - 1] == " " { index -= 1 }
        while index > 0 && characters[index - 1] != " " { index -= 1 }
        return index
    }

    private func nextWordEnd() -> Int {
        var index = cursor
        while index < characters.count && characters[index] == " " { index += 1 }
        while index < characters.count && characters[index] != " " { index += 1 }
        return index
    }
}

/// Draws a `LineEditor` on one terminal line, scrolling horizontally when the text is wider than it.
///
/// Counted in terminal columns, not characters (`TerminalColumns`): a wide character takes two, so the cursor
/// stays on the character it edits and the line never wraps onto a second row.
enum LineEditorView {
    /// The escape text that redraws the prompt and line in place and puts the cursor where it belongs.
    static func render(prompt: String, editor: LineEditor, columns: Int) -> String {
        let promptWidth = TerminalColumns.width(of: prompt)
        let room = max(1, columns - promptWidth - 1)
        let characters = editor.characters
        let widths = characters.map(TerminalColumns.width(of:))
        let cursor = editor.cursor
        // The cell under the cursor: the character it sits on, or one column past the end of the line.
        let cursorCell = cursor < widths.count ? widths[cursor] : 1
        // Scrolled as little as leaves the cursor's cell inside the room.
        var start = 0
        var beforeCursor = widths[0..<cursor].reduce(0, +)
        while start < cursor && beforeCursor + cursorCell > room {
            beforeCursor -= widths[start]
            start += 1
        }
        var end = start
        var used = 0
        while end < characters.count && used + widths[end] <= room {
            used += widths[end]
            end += 1
        }
        let visible = String(characters[start..<end])
        return "\r" + prompt + visible + ANSI.clearToEndOfLine + ANSI.column(promptWidth + beforeCursor)
    }
}
