/// A small VT100/xterm interpreter: applies what a program writes to a terminal to a grid of cells,
/// so tests read the screen as a person would see it instead of grepping escape sequences.
///
/// Covers what coinwatch emits: text (UTF-8), CR, LF, BS, TAB, cursor positioning and moves (CUP, CUU,
/// CUD, CUF, CUB, CHA), erase in line and display (EL, ED), the alternate screen (?1049) and cursor
/// visibility (?25). Colours and other SGR attributes are ignored.
struct TerminalScreen {
    private(set) var rows: Int
    private(set) var columns: Int
    private var main: [[Character]]
    private var alternate: [[Character]]
    private(set) var usingAlternateScreen = false
    private(set) var cursorVisible = true
    private(set) var cursorRow = 0
    private(set) var cursorColumn = 0
    private var savedCursor = (0, 0)
    private var pending: [UInt8] = []

    init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
        main = Self.blank(rows, columns)
        alternate = Self.blank(rows, columns)
    }

    private static func blank(_ rows: Int, _ columns: Int) -> [[Character]] {
        Array(repeating: Array(repeating: " ", count: columns), count: rows)
    }

    /// The visible lines, trailing blanks removed.
    var lines: [String] {
        (usingAlternateScreen ? alternate : main).map { row in
            var text = String(row)
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    var text: String { lines.joined(separator: "\n") }

    /// The line the cursor is on (trailing blanks removed).
    var cursorLine: String { lines[cursorRow] }

    /// Whether the cursor's line reads `text` and the cursor is at its end: what a prompt with a
    /// typed line looks like. Trailing blanks of `text` are kept in the check through the cursor column.
    func shows(_ text: String) -> Bool {
        var trimmed = text
        while trimmed.last == " " { trimmed.removeLast() }
        return cursorLine == trimmed && cursorColumn == text.count
    }

    mutating func resize(rows: Int, columns: Int) {
        func fit(_ grid: [[Character]]) -> [[Character]] {
            var grid = grid.map { row in
                row.count >= columns ? Array(row.prefix(columns)) : row + Array(repeating: " ", count: columns - row.count)
            }
            while grid.count > rows { grid.removeFirst() }
            while grid.count < rows { grid.append(Array(repeating: " ", count: columns)) }
            return grid
        }
        self.rows = rows
        self.columns = columns
        main = fit(main)
        alternate = fit(alternate)
        cursorRow = min(cursorRow, rows - 1)
        cursorColumn = min(cursorColumn, columns - 1)
    }

    mutating func feed(_ bytes: [UInt8]) {
        pending += bytes
        var index = 0
        while index < pending.count {
            guard let used = step(pending[index...]) else { break }
            index += used
        }
        pending.removeFirst(index)
    }

    /// Applies one unit (a character or a sequence) and returns its length, or nil if incomplete.
    private mutating func step(_ bytes: ArraySlice<UInt8>) -> Int? {
        let start = bytes.startIndex
        let byte = bytes[start]
        switch byte {
        case 0x1B:
            guard bytes.count >= 2 else { return nil }
            if bytes[start + 1] != UInt8(ascii: "[") { return 2 }
            var index = start + 2
            while index < bytes.endIndex, (0x30...0x3F).contains(bytes[index]) { index += 1 }
            guard index < bytes.endIndex else { return nil }
            let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
            control(parameters, final: bytes[index])
            return index - start + 1
        case 0x0D:
            cursorColumn = 0
        case 0x0A:
            lineFeed()
        case 0x08:
            cursorColumn = max(0, cursorColumn - 1)
        case 0x09:
            cursorColumn = min(columns - 1, (cursorColumn / 8 + 1) * 8)
        case 0x00..<0x20, 0x7F:
            break
        default:
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            guard bytes.count >= length else { return nil }
            let character = String(decoding: bytes[start..<(start + length)], as: UTF8.self).first ?? "?"
            put(character)
            return length
        }
        return 1
    }

    private mutating func put(_ character: Character) {
        if cursorColumn >= columns {
            cursorColumn = 0
            lineFeed()
        }
        if usingAlternateScreen {
            alternate[cursorRow][cursorColumn] = character
        } else {
            main[cursorRow][cursorColumn] = character
        }
        cursorColumn += 1
    }

    private mutating func lineFeed() {
        if cursorRow == rows - 1 {
            if usingAlternateScreen {
                alternate.removeFirst()
                alternate.append(Array(repeating: " ", count: columns))
            } else {
                main.removeFirst()
                main.append(Array(repeating: " ", count: columns))
            }
        } else {
            cursorRow += 1
        }
    }

    private mutating func clear(row: Int, from: Int, to: Int) {
        guard row >= 0, row < rows, from < to else { return }
        for column in max(0, from)..<min(columns, to) {
            if usingAlternateScreen { alternate[row][column] = " " } else { main[row][column] = " " }
        }
    }

    private mutating func control(_ parameters: String, final: UInt8) {
        if parameters.hasPrefix("?") {
            let mode = parameters.dropFirst()
            let on = final == UInt8(ascii: "h")
            if mode == "1049" && on != usingAlternateScreen {
                if on {
                    savedCursor = (cursorRow, cursorColumn)
                    alternate = Self.blank(rows, columns)
                    usingAlternateScreen = true
                } else {
                    usingAlternateScreen = false
                    (cursorRow, cursorColumn) = savedCursor
                }
            } else if mode == "25" {
                cursorVisible = on
            }
            return
        }
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        func number(_ index: Int, _ fallback: Int) -> Int {
            index < numbers.count ? (numbers[index] ?? fallback) : fallback
        }
        switch final {
        case UInt8(ascii: "H"), UInt8(ascii: "f"):
            cursorRow = min(rows - 1, max(0, number(0, 1) - 1))
            cursorColumn = min(columns - 1, max(0, number(1, 1) - 1))
        case UInt8(ascii: "A"): cursorRow = max(0, cursorRow - max(1, number(0, 1)))
        case UInt8(ascii: "B"): cursorRow = min(rows - 1, cursorRow + max(1, number(0, 1)))
        case UInt8(ascii: "C"): cursorColumn = min(columns - 1, cursorColumn + max(1, number(0, 1)))
        case UInt8(ascii: "D"): cursorColumn = max(0, cursorColumn - max(1, number(0, 1)))
        case UInt8(ascii: "G"): cursorColumn = min(columns - 1, max(0, number(0, 1) - 1))
        case UInt8(ascii: "K"):
            switch number(0, 0) {
            case 0: clear(row: cursorRow, from: cursorColumn, to: columns)
            case 1: clear(row: cursorRow, from: 0, to: cursorColumn + 1)
            default: clear(row: cursorRow, from: 0, to: columns)
            }
        case UInt8(ascii: "J"):
            switch number(0, 0) {
            case 0:
                clear(row: cursorRow, from: cursorColumn, to: columns)
                for row in (cursorRow + 1)..<max(cursorRow + 1, rows) { clear(row: row, from: 0, to: columns) }
            case 1:
                for row in 0..<cursorRow { clear(row: row, from: 0, to: columns) }
                clear(row: cursorRow, from: 0, to: cursorColumn + 1)
            default:
                for row in 0..<rows { clear(row: row, from: 0, to: columns) }
            }
        default:
            break
        }
    }
}
