import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchModel
import CoinWatchProto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The interactive shell: reads lines, runs them as commands, keeps history, completes words.
///
/// On a terminal it edits lines itself (raw mode, `LineEditor`), and commands run with the terminal
/// still raw, so Ctrl-C reaches them as a byte: it cancels a call or ends `watch`/`alerts` and comes
/// back to the prompt instead of killing the shell. Fed from a pipe it just runs line after line.
final class Shell {
    let options: GlobalOptions
    let environment: [String: String]
    let terminal = Terminal()
    let console = Console.shared
    let out = OutputStream.standardOutput
    let session: ClientSession
    let historyFile: HistoryFile?
    let symbols = SymbolCache()

    init(options: GlobalOptions, environment: [String: String]) {
        self.options = options
        self.environment = environment
        session = ClientSession(options: options)
        historyFile = HistoryFile.inHome(environment: environment)
    }

    /// The prompt names the server, as redis-cli does, so a shell on the wrong server shows it.
    var prompt: String { "\(options.server)> " }

    func run() throws(CLIError) -> Int32 {
        guard terminal.isInteractive else { return runScript() }
        return try terminal.withRawMode { () throws(CLIError) -> Int32 in
            out.write(
                "coinwatch \(CoinWatchVersion.current) shell on \(options.server). Type help for commands,"
                    + " Tab to complete, Ctrl-D to leave.\n")
            symbols.refresh(session: session)
            var editor = LineEditor(history: historyFile?.load() ?? [])
            while true {
                guard let line = readLine(&editor) else { return stopSignal.map { 128 + $0 } ?? ExitStatus.ok }
                let trimmed = line.trimmingBlanks
                if !trimmed.isEmpty && !line.hasPrefix(" ") && !trimmed.contains("--token") {
                    editor.remember(trimmed)
                    historyFile?.save(editor.history)
                }
                if case .leave(let status) = execute(trimmed) { return status ?? ExitStatus.ok }
            }
        }
    }

    // MARK: Reading a line

    /// Keys already read but not yet used: typed after Enter in the same burst, or while a command ran.
    private var pendingKeys: [Key] = []
    private var decoder = KeyDecoder()
    /// The signal (SIGTERM, SIGHUP) that ended the shell at its prompt.
    private var stopSignal: Int32?

    /// Reads one line with editing; nil at Ctrl-D on an empty line or when the terminal goes away.
    private func readLine(_ editor: inout LineEditor) -> String? {
        editor.startLine()
        var columns = terminal.size.columns
        terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
        pendingKeys += decoder.feed(console.takeTypeAhead())
        while true {
            if pendingKeys.isEmpty {
                let events = console.wait(timeout: decoder.hasPending ? .milliseconds(50) : nil, input: terminal.input)
                for signal in events.signals {
                    switch signal {
                    case SIGWINCH:
                        columns = terminal.size.columns
                        terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
                    case SIGINT:
                        pendingKeys.append(.control("c"))
                    default:
                        terminal.write("\r\n")
                        stopSignal = signal
                        return nil
                    }
                }
                if events.inputClosed { return nil }
                pendingKeys += decoder.feed(events.input)
                if events.input.isEmpty && decoder.hasPending { pendingKeys += decoder.flush() }
            }
            while !pendingKeys.isEmpty {
                let key = pendingKeys.removeFirst()
                switch editor.handle(key) {
                case .none:
                    break
                case .bell:
                    terminal.write("\u{07}")
                case .edited:
                    terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
                case .submit(let line):
                    terminal.write("\r\n")
                    return line
                case .endOfInput:
                    terminal.write("\r\n")
                    return nil
                case .cancel:
                    terminal.write("^C\r\n")
                    editor.startLine()
                    terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
                case .clearScreen:
                    terminal.write(ANSI.home + ANSI.clearScreen)
                    terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
                case .complete:
                    complete(&editor, columns: columns)
                }
            }
        }
    }

    /// Tab: completes the word at the cursor, or lists the choices when it is ambiguous.
    private func complete(_ editor: inout LineEditor, columns: Int) {
        let before = String(editor.characters[..<editor.cursor])
        var completion = Completer.complete(before, symbols: symbols.current)
        if completion.candidates.isEmpty && Completer.slot(before) == .symbol {
            // The symbols may not be known yet (or be new): ask the server once, briefly.
            symbols.refreshNow(session: session, console: console)
            completion = Completer.complete(before, symbols: symbols.current)
        }
        if let replacement = completion.replacement {
            editor.replace(completion.start..<editor.cursor, with: replacement)
        } else if completion.candidates.count > 1 {
            terminal.write("\r\n" + completion.candidates.joined(separator: "  ") + "\r\n")
        } else {
            terminal.write("\u{07}")
        }
        terminal.write(LineEditorView.render(prompt: prompt, editor: editor, columns: columns))
    }

    // MARK: Running a line

    enum Outcome {
        case next
        /// Leave the shell: with `exit`/`quit` (nil status) or stopped by a signal (128 + it).
        case leave(Int32?)
    }

    /// Runs one line; errors are printed and the shell carries on.
    @discardableResult
    func execute(_ line: String) -> Outcome {
        let words: [String]
        do {
            words = try ShellWords.split(line)
        } catch {
            OutputStream.standardError.line("error: \(error.message)")
            lastStatus = ExitStatus.usage
            return .next
        }
        guard let first = words.first else { return .next }
        switch first {
        case "exit", "quit":
            return .leave(nil)
        case "clear":
            out.write(ANSI.home + ANSI.clearScreen)
            return .next
        default:
            break
        }
        do throws(CLIError) {
            lastStatus = try run(words)
        } catch {
            // Ctrl-C just comes back to the prompt; SIGTERM or SIGHUP ends the shell.
            Dispatcher.report(error, inShell: true)
            lastStatus = error.code.exitStatus
            if let signal = error.code.signal, signal != SIGINT { return .leave(error.code.exitStatus) }
        }
        return .next
    }

    /// The exit status of the last line, which a script's shell exits with.
    private(set) var lastStatus = ExitStatus.ok

    private func run(_ words: [String]) throws(CLIError) -> Int32 {
        switch try Dispatcher.resolve(words, environment: environment.merging(options.asEnvironment) { $1 }) {
        case .overview:
            out.write(try HelpCommand.text(for: [], inShell: true))
            return ExitStatus.ok
        case .version:
            out.line("coinwatch \(CoinWatchVersion.current)")
            return ExitStatus.ok
        case .groupHelp(let word):
            out.write(HelpCommand.shellForm(CommandCatalog.groupHelp(word)))
            return ExitStatus.ok
        case .none:
            return ExitStatus.ok
        case .command(let command, let parsed):
            return try Dispatcher.run(command, parsed, inShell: true, environment: environment) { lineOptions in
                let same = lineOptions.server == options.server && lineOptions.token == options.token
                    && lineOptions.timeout == options.timeout
                return same ? session : ClientSession(options: lineOptions)
            }
        }
    }

    // MARK: Without a terminal

    /// Runs the lines of standard input one by one, echoing nothing; exits with the last line's status.
    private func runScript() -> Int32 {
        var pending = [UInt8]()
        while true {
            let events = console.wait(timeout: nil, input: terminal.input)
            if let signal = events.signals.first(where: { $0 != SIGWINCH }) { return 128 + signal }
            pending += events.input
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if case .leave(let status) = execute(line.trimmingBlanks) { return status ?? lastStatus }
            }
            if pending.count > HistoryFile.maxEntryLength * 16 {
                OutputStream.standardError.line("error: input line too long")
                return ExitStatus.usage
            }
            if events.inputClosed {
                if !pending.isEmpty { execute(String(decoding: pending, as: UTF8.self).trimmingBlanks) }
                return lastStatus
            }
        }
    }
}

/// The symbols the server knows, for completion: fetched when the shell starts and again when a Tab
/// finds nothing and the list is older than a few seconds.
final class SymbolCache: Sendable {
    private struct State {
        var symbols: [String] = []
        var fetched: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    static let staleAfter = Duration.seconds(3)

    var current: [String] { state.withLock { $0.symbols } }

    /// Fetches in the background.
    func refresh(session: ClientSession) {
        Task.detached { await self.fetch(session) }
    }

    /// Fetches now (bounded by a short deadline) unless the list is fresh.
    func refreshNow(session: ClientSession, console: Console) {
        if let fetched = state.withLock({ $0.fetched }), ContinuousClock.now - fetched < Self.staleAfter { return }
        _ = try? console.run(interruptKeys: nil) { () throws(CLIError) in await self.fetch(session) }
    }

    private func fetch(_ session: ClientSession) async {
        guard let ticks = try? await session.client.prices(timeout: .seconds(2)) else { return }
        let symbols = ticks.map(\.symbol)
        state.withLock {
            $0.symbols = symbols
            $0.fetched = .now
        }
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingBlanks: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
