@testable import CoinWatchCLI
import Testing

@Suite("Keys and line editing")
struct LineEditingTests {
    @Test("escape sequences of both cursor modes, split reads, and UTF-8")
    func keys() {
        var decoder = KeyDecoder()
        #expect(decoder.feed(Array("a\u{1B}[A\u{1B}OB\u{1B}[3~\u{1B}[H\u{1B}[4~\r\t\u{7F}\u{1}".utf8)) == [
            .character("a"), .up, .down, .delete, .home, .end, .enter, .tab, .backspace, .control("a"),
        ])
        #expect(decoder.feed([0x1B, UInt8(ascii: "[")]) == [])
        #expect(decoder.hasPending)
        #expect(decoder.feed([UInt8(ascii: "D")]) == [.left])
        #expect(decoder.feed(Array("é".utf8).prefix(1).map { $0 }) == [])
        #expect(decoder.feed(Array("é".utf8).suffix(1).map { $0 }) == [.character("é")])
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.flush() == [.escape])
        #expect(decoder.feed(Array("\u{1B}[1;5C".utf8)) == [.wordRight])
        #expect(decoder.feed([0xFF]) == [.unknown])
    }

    func editor(typing text: String, history: [String] = []) -> LineEditor {
        var editor = LineEditor(history: history)
        for character in text { _ = editor.handle(.character(character)) }
        return editor
    }

    @Test("moving and deleting")
    func editing() {
        var editor = self.editor(typing: "prces")
        _ = editor.handle(.left)
        _ = editor.handle(.left)
        _ = editor.handle(.left)
        _ = editor.handle(.character("i"))
        #expect(editor.text == "prices")
        #expect(editor.cursor == 3)
        _ = editor.handle(.control("a"))
        #expect(editor.handle(.backspace) == .bell)
        _ = editor.handle(.delete)
        #expect(editor.text == "rices")
        _ = editor.handle(.control("e"))
        #expect(editor.cursor == 5)
        #expect(editor.handle(.right) == .bell)
        _ = editor.handle(.backspace)
        #expect(editor.text == "rice")
        _ = editor.handle(.home)
        _ = editor.handle(.control("d"))
        #expect(editor.text == "ice")
    }

    @Test("Ctrl-K, Ctrl-U and Ctrl-W cut; Ctrl-Y pastes")
    func cutting() {
        var editor = self.editor(typing: "settings get phone-1")
        _ = editor.handle(.control("w"))
        #expect(editor.text == "settings get ")
        _ = editor.handle(.control("y"))
        #expect(editor.text == "settings get phone-1")
        for _ in 0..<8 { _ = editor.handle(.left) }
        _ = editor.handle(.control("k"))
        #expect(editor.text == "settings get")
        _ = editor.handle(.left)
        _ = editor.handle(.left)
        _ = editor.handle(.control("u"))
        #expect(editor.text == "et")
        #expect(editor.cursor == 0)
    }

    @Test("Enter submits, Ctrl-D on an empty line ends, Ctrl-C cancels, Tab completes")
    func actions() {
        var editor = self.editor(typing: "health")
        #expect(editor.handle(.enter) == .submit("health"))
        #expect(editor.handle(.tab) == .complete)
        #expect(editor.handle(.control("c")) == .cancel)
        #expect(editor.handle(.control("l")) == .clearScreen)
        editor.startLine()
        #expect(editor.handle(.control("d")) == .endOfInput)
    }

    @Test("Up and Down walk the history and come back to the draft")
    func history() {
        var editor = self.editor(typing: "pri", history: ["health", "prices BTC"])
        _ = editor.handle(.up)
        #expect(editor.text == "prices BTC")
        _ = editor.handle(.up)
        #expect(editor.text == "health")
        #expect(editor.handle(.up) == .bell)
        _ = editor.handle(.down)
        _ = editor.handle(.down)
        #expect(editor.text == "pri")
        #expect(editor.handle(.down) == .bell)
        editor.remember("watch")
        editor.remember("watch")
        #expect(editor.history == ["health", "prices BTC", "watch"])
        editor.startLine()
        _ = editor.handle(.control("p"))
        #expect(editor.text == "watch")
    }

    @Test("history stays bounded")
    func historyLimit() {
        var editor = LineEditor()
        for index in 0..<10 { editor.remember("line \(index)", limit: 3) }
        #expect(editor.history == ["line 7", "line 8", "line 9"])
    }

    @Test("the view scrolls long lines to keep the cursor visible")
    func view() {
        let long = editor(typing: "settings set phone-1 BTC --below 60000")
        #expect(LineEditorView.render(prompt: "> ", editor: long, columns: 20)
            == "\r> TC --below 60000\u{1B}[K\r\u{1B}[18C")
        var short = editor(typing: "abc")
        _ = short.handle(.left)
        _ = short.handle(.left)
        #expect(LineEditorView.render(prompt: "> ", editor: short, columns: 80) == "\r> abc\u{1B}[K\r\u{1B}[3C")
    }

    @Test("wide characters take two columns: the cursor stays on the character it edits, the line on one row")
    func wideCharacters() {
        var text = editor(typing: "日本X")
        #expect(LineEditorView.render(prompt: "> ", editor: text, columns: 80) == "\r> 日本X\u{1B}[K\r\u{1B}[7C")
        _ = text.handle(.left)
        #expect(LineEditorView.render(prompt: "> ", editor: text, columns: 80) == "\r> 日本X\u{1B}[K\r\u{1B}[6C")
        _ = text.handle(.left)
        #expect(LineEditorView.render(prompt: "> ", editor: text, columns: 80) == "\r> 日本X\u{1B}[K\r\u{1B}[4C")
        // Thirty wide characters in 20 columns: 17 columns of room after the prompt, so at most 8 of them shown,
        // the cursor after them, and nothing that would wrap.
        let long = editor(typing: String(repeating: "語", count: 30))
        let line = LineEditorView.render(prompt: "> ", editor: long, columns: 20)
        #expect(line == "\r> " + String(repeating: "語", count: 8) + "\u{1B}[K\r\u{1B}[18C")
        #expect(TerminalColumns.width(of: "a日é😀") == 6)
        #expect(TerminalColumns.width(of: "e\u{301}") == 1, "a combining mark takes no column of its own")
    }
}
