import CoinWatchCommandLine
import CoinWatchModel

/// Turns a command line into a run of one command: finds the command words, parses its options
/// together with the global ones, and calls its implementation.
///
/// The one-shot CLI and the shell share it, so a line means the same thing in both.
enum Dispatcher {
    /// What a command line asks for.
    enum Request {
        /// The overview (`--help` with no command).
        case overview
        case version
        /// No command at all.
        case none(ParsedArguments)
        /// Help of a group of commands (`settings --help`).
        case groupHelp(String)
        case command(CommandSpec, ParsedArguments)
    }

    /// Resolves `arguments` (without the program name).
    static func resolve(_ arguments: [String], environment: [String: String]) throws(CLIError) -> Request {
        let globals = GlobalOptions.specs
        guard let index = ParsedArguments.commandIndex(in: arguments, options: globals) else {
            let parsed = try usage(CommandCatalog.help) { () throws(UsageError) in
                try ParsedArguments.parse(arguments, options: globals, environment: environment)
            }
            if parsed.has("help") { return .overview }
            if parsed.has("version") { return .version }
            return .none(parsed)
        }
        let word = arguments[index]
        var rest = arguments
        rest.remove(at: index)
        let members = CommandCatalog.commands(startingWith: word)
        guard !members.isEmpty else {
            throw CLIError.usage("unknown command '\(word)'\(suggestion(for: word))", CommandCatalog.overviewUsage)
        }
        var command = members[0]
        if members.count > 1 || members[0].words.count > 1 {
            let tail = Array(rest[index...])
            guard let subIndex = ParsedArguments.commandIndex(in: tail, options: globals) else {
                if tail.contains("--help") || tail.contains("-h") { return .groupHelp(word) }
                let names = members.map { $0.words[1] }
                throw CLIError.usage(
                    "missing \(word) command: \(names.dropLast().joined(separator: ", ")) or \(names.last!)",
                    CommandCatalog.groupUsage(word), helpTopic: word)
            }
            let sub = tail[subIndex]
            guard let member = members.first(where: { $0.words[1] == sub }) else {
                throw CLIError.usage(
                    "unknown \(word) command '\(sub)'\(suggestion(for: sub, among: members.map { $0.words[1] }))",
                    CommandCatalog.groupUsage(word), helpTopic: word)
            }
            command = member
            rest.remove(at: index + subIndex)
        }
        let spec = command
        let parsed = try usage(spec) { () throws(UsageError) in
            try ParsedArguments.parse(rest, options: GlobalOptions.specs + spec.options, environment: environment)
        }
        if parsed.has("version") { return .version }
        return .command(command, parsed)
    }

    /// Runs a resolved command.
    static func run(
        _ command: CommandSpec, _ parsed: ParsedArguments, inShell: Bool, environment: [String: String],
        session: (GlobalOptions) -> ClientSession
    ) throws(CLIError) -> Int32 {
        if parsed.has("help") {
            OutputStream.standardOutput.write(inShell ? HelpCommand.shellForm(command.help) : command.help)
            return ExitStatus.ok
        }
        let options = try usage(command) { () throws(UsageError) in try GlobalOptions(parsed) }
        let context = CommandContext(
            options: options, session: session(options), inShell: inShell, environment: environment)
        switch command.name {
        case "settings get": return try SettingsCommand.get(parsed, context)
        case "settings set": return try SettingsCommand.set(parsed, context)
        case "settings delete": return try SettingsCommand.delete(parsed, context)
        case "prices": return try PricesCommand.prices(parsed, context)
        case "publish": return try PricesCommand.publish(parsed, context)
        case "watch": return try StreamCommands.watch(parsed, context)
        case "alerts": return try StreamCommands.alerts(parsed, context)
        case "devices register": return try DevicesCommand.register(parsed, context)
        case "devices show": return try DevicesCommand.show(parsed, context)
        case "devices unregister": return try DevicesCommand.unregister(parsed, context)
        case "health": return try HealthCommand.run(parsed, context)
        case "help": return try HelpCommand.run(parsed, context)
        case "shell":
            if inShell { throw CLIError.usage("already in the shell", of: command) }
            return try Shell(options: options, environment: environment).run()
        default:
            throw CLIError.usage("unknown command '\(command.name)'", CommandCatalog.overviewUsage)
        }
    }

    /// ` (did you mean 'prices'?)` for a word within two edits of a known one, else empty.
    static func suggestion(for word: String, among names: [String] = CommandCatalog.topLevelWords) -> String {
        let scored = names.map { ($0, editDistance(word.lowercased(), $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        return " (did you mean '\(best.0)'?)"
    }

    /// Levenshtein distance, for suggestions between short words.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Prints an error the way every command does: `error: …`, then for usage errors the usage and the help to
    /// read next. In the shell, commands are typed without `coinwatch`, and so are the usage and the hint.
    static func report(_ error: CLIError, inShell: Bool = false, to err: OutputStream = .standardError) {
        // Stopped by Ctrl-C or a signal: the user knows; the exit status says it to scripts.
        if error.code.signal != nil { return }
        err.line("error: \(error.message)")
        guard let usage = error.usage else { return }
        let topic = error.helpTopic ?? ""
        if inShell {
            // The list of commands is what `help` shows; a command's usage is the line it was typed on.
            if !topic.isEmpty { err.line("USAGE: \(HelpCommand.shellForm(usage))") }
            err.line(topic.isEmpty ? "Type 'help' for the commands." : "Type 'help \(topic)' for its options.")
        } else {
            err.line("USAGE: \(usage)")
            err.line(topic.isEmpty ? "Run 'coinwatch help' for the commands." : "Run 'coinwatch help \(topic)' for its options.")
        }
    }
}
