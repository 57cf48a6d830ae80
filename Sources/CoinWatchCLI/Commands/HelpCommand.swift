import CoinWatchCommandLine

/// `help [COMMAND...]`: the same texts as `--help`.
enum HelpCommand {
    static func run(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        context.out.write(try text(for: parsed.positionals, inShell: context.inShell))
        return ExitStatus.ok
    }

    /// The help for the command named by `words`, the overview for none.
    static func text(for words: [String], inShell: Bool = false) throws(CLIError) -> String {
        guard let first = words.first else {
            return inShell ? CommandCatalog.overview + "\n" + shellNotes : CommandCatalog.overview
        }
        let members = CommandCatalog.commands(startingWith: first)
        guard !members.isEmpty else {
            throw CLIError.usage("unknown command '\(first)'\(Dispatcher.suggestion(for: first))", CommandCatalog.help.usage)
        }
        if members.count == 1 && members[0].words.count == 1 { return members[0].help }
        guard words.count > 1 else { return CommandCatalog.groupHelp(first) }
        guard let member = members.first(where: { $0.words[1] == words[1] }) else {
            throw CLIError.usage("unknown \(first) command '\(words[1])'", CommandCatalog.groupUsage(first))
        }
        return member.help
    }

    static let shellNotes = """
        IN THE SHELL:
          Type commands without the `coinwatch` prefix; `exit`, `quit` or Ctrl-D leaves, `clear` clears the
          screen. Tab completes commands, options and symbols; Up/Down walk the history (~/.coinwatch_history);
          Ctrl-A/E go to the start/end of the line, Ctrl-K/U/W cut to the end/start/previous word, Ctrl-Y pastes;
          Ctrl-C cancels the line, or stops watch and alerts.

        """
}
