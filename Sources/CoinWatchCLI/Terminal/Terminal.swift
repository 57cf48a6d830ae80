#if canImport(Glibc)
import Glibc
#endif

/// The controlling terminal as the CLI uses it: raw keys in, escape sequences out.
///
/// Owned by the UI thread. Every change of mode is scoped (`withRawMode`): the previous settings are
/// put back exactly, byte for byte, however the scope ends, so nesting (a dashboard opened from the
/// shell) returns each caller to the mode it had.
final class Terminal {
    let input: Int32
    let output: Int32

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// Both ends are terminals: the condition for the full-screen dashboard and the line editor.
    var isInteractive: Bool { isatty(input) == 1 && isatty(output) == 1 }

    /// Rows and columns (TIOCGWINSZ); 24×80 when the terminal does not say.
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        // ioctl(TIOCGWINSZ): fills the caller's winsize; -1 when the descriptor is not a terminal.
        if ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
            return (Int(size.ws_row), Int(size.ws_col))
        }
        return (24, 80)
    }

    /// Runs `body` with the terminal in raw mode, then restores the settings it found.
    ///
    /// Raw here means: keys arrive one by one, unechoed, and Ctrl-C, Ctrl-Z, Ctrl-S arrive as bytes
    /// instead of signals (so the code that owns the screen decides what they do). Output processing
    /// stays on, so `\n` still starts a new line at column 1.
    func withRawMode<T>(_ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        var saved = termios()
        // tcgetattr: copies the terminal's settings into the caller's struct; -1 if not a terminal.
        guard tcgetattr(input, &saved) == 0 else { return try body() }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        // tcsetattr(TCSAFLUSH): applies once pending output is written, dropping unread input.
        _ = tcsetattr(input, TCSAFLUSH, &raw)
        defer { _ = tcsetattr(input, TCSAFLUSH, &saved) }
        return try body()
    }

    /// Writes escape sequences and text to the terminal.
    func write(_ text: String) {
        OutputStream(descriptor: output).write(text)
    }
}

/// The escape sequences the CLI sends (VT100/xterm, understood by every terminal in use today).
enum ANSI {
    static let enterAlternateScreen = "\u{1B}[?1049h"
    static let leaveAlternateScreen = "\u{1B}[?1049l"
    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    static let home = "\u{1B}[H"
    static let clearScreen = "\u{1B}[2J"
    static let clearToEndOfLine = "\u{1B}[K"
    static let clearToEndOfScreen = "\u{1B}[J"
    static let reset = "\u{1B}[0m"
    static let bold = "\u{1B}[1m"
    static let dim = "\u{1B}[2m"
    static let red = "\u{1B}[31m"
    static let green = "\u{1B}[32m"
    static let yellow = "\u{1B}[33m"
    static let inverse = "\u{1B}[7m"

    /// Moves the cursor to `column` (0-based) of the current line.
    static func column(_ column: Int) -> String {
        column == 0 ? "\r" : "\r\u{1B}[\(column)C"
    }
}
