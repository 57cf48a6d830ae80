import CoinWatchCommandLine

/// What a command runs with: the options, the server session, the terminal and where to print.
final class CommandContext {
    let options: GlobalOptions
    let session: ClientSession
    let console: Console
    let terminal: Terminal
    let out: OutputStream
    let err: OutputStream
    /// Run from the shell: the terminal is already raw (Ctrl-C arrives as a byte) and streams return
    /// to the prompt instead of exiting.
    let inShell: Bool
    let environment: [String: String]

    init(
        options: GlobalOptions, session: ClientSession, console: Console = .shared, terminal: Terminal = Terminal(),
        out: OutputStream = .standardOutput, err: OutputStream = .standardError, inShell: Bool = false,
        environment: [String: String] = [:]
    ) {
        self.options = options
        self.session = session
        self.console = console
        self.terminal = terminal
        self.out = out
        self.err = err
        self.inShell = inShell
        self.environment = environment
    }

    /// Where Ctrl-C arrives as a byte rather than a signal: the raw terminal of the shell.
    var interruptInput: Int32? { inShell && terminal.isInteractive ? terminal.input : nil }

    /// Runs async work (calls) from the UI thread; Ctrl-C cancels it.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws(CLIError) -> T) throws(CLIError) -> T {
        try console.run(interruptKeys: interruptInput, body)
    }

    /// Prints a result: the JSON object with `--json`, else the text.
    func emit(_ text: @autoclosure () -> String, json: @autoclosure () -> JSONObject) {
        if options.json {
            out.line(json().description)
        } else {
            out.write(text())
        }
    }

    /// Whether colour may be used on this terminal.
    var color: Bool { Screen.colorEnabled(environment: environment) }
}
