import CoinWatchCommandLine

/// `help [COMMAND...]`: the same texts as `--help`.
enum HelpCommand {
    static func run(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        context.out.write(try text(for: parsed.positionals, inShell: context.inShell))
        return ExitStatus.ok
    }

    /// The help for the command named by `words`, the overview for none. In the shell the overview is the shell's
    /// own short list, and commands are shown as they are typed there, without `coinwatch`.
    static func text(for words: [String], inShell: Bool = false) throws(CLIError) -> String {
        let text = try cliText(for: words, inShell: inShell)
        return inShell ? shellForm(text) : text
    }

    private static func cliText(for words: [String], inShell: Bool) throws(CLIError) -> String {
        guard let first = words.first else {
            return inShell ? shellOverview : CommandCatalog.overview
        }
        let members = CommandCatalog.commands(startingWith: first)
        guard !members.isEmpty else {
            throw CLIError.usage("unknown command '\(first)'\(Dispatcher.suggestion(for: first))", CommandCatalog.help.usage)
        }
        if members.count == 1 && members[0].words.count == 1 { return members[0].help }
        guard words.count > 1 else { return CommandCatalog.groupHelp(first) }
        guard let member = members.first(where: { $0.words[1] == words[1] }) else {
            throw CLIError.usage(
                "unknown \(first) command '\(words[1])'", CommandCatalog.groupUsage(first), helpTopic: first)
        }
        return member.help
    }

    /// A help text as the shell shows it: `settings get DEVICE` where the CLI's says `coinwatch settings get DEVICE`
    /// (usage lines, examples, and hints such as `coinwatch help settings COMMAND`).
    static func shellForm(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var line = String(line)
            line = line.replacing("USAGE: coinwatch ", with: "USAGE: ").replacing("`coinwatch ", with: "`")
            let indent = line.prefix { $0 == " " }
            if line.dropFirst(indent.count).hasPrefix("coinwatch ") {
                line = String(indent + line.dropFirst(indent.count + "coinwatch ".count))
            }
            return line
        }.joined(separator: "\n")
    }

    /// `help` in the shell: the commands as typed there, the shell's own words and keys, and where to look next.
    static var shellOverview: String {
        let commands = CommandCatalog.all.filter { $0.name != "shell" }
        var rows = commands.map { ("\($0.name) \($0.arguments)".trimmingBlanks, $0.summary) }
        rows += [("clear", "Clear the screen."), ("exit, quit, Ctrl-D", "Leave the shell.")]
        let width = rows.map(\.0.count).max() ?? 0
        let list = rows.map { "  \($0.0)\(String(repeating: " ", count: width - $0.0.count))  \($0.1)" }
        return """
            COMMANDS (typed without `coinwatch`):
            \(list.joined(separator: "\n"))

            KEYS:
              Tab completes commands, options and symbols; Up/Down walk the history (~/.coinwatch_history).
              Ctrl-A/E go to the start/end of the line, Ctrl-K/U/W cut to the end/start/previous word, Ctrl-Y pastes.
              Ctrl-C cancels the line, or stops watch and alerts.

            Type `help COMMAND` for a command's options (every command also takes --server, --json and the other
            global options).

            """
    }
}
