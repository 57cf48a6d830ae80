import CoinWatchCommandLine

/// One command of the CLI as help, dispatch and shell completion all need to know it.
struct CommandSpec: Sendable {
    /// What a positional argument is, so the shell knows what to complete there.
    enum Operand: Sendable, Hashable {
        /// A device id: nothing to complete.
        case device
        /// One symbol known to the server.
        case symbol
        /// Any number of symbols.
        case symbols
        /// SYMBOL PRICE pairs: symbols at even positions.
        case symbolPricePairs
        /// A command name (for `help`).
        case command
    }

    /// The words that name the command: `["settings", "set"]`.
    let words: [String]
    /// The positionals in the usage line: `DEVICE SYMBOL`.
    let arguments: String
    /// One line for the command list.
    let summary: String
    /// The paragraph at the top of the command's help.
    let details: String
    let options: [OptionSpec]
    let operands: [Operand]
    let examples: [String]

    init(
        _ words: [String], arguments: String = "", summary: String, details: String, options: [OptionSpec] = [],
        operands: [Operand] = [], examples: [String] = []
    ) {
        self.words = words
        self.arguments = arguments
        self.summary = summary
        self.details = details
        self.options = options
        self.operands = operands
        self.examples = examples
    }

    var name: String { words.joined(separator: " ") }

    /// `coinwatch settings set DEVICE SYMBOL [options]`.
    var usage: String {
        ["coinwatch", name, arguments, options.isEmpty ? "[global options]" : "[options]"]
            .filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The command's `--help` text.
    var help: String {
        var trailing = [(title: String, body: String)]()
        if !examples.isEmpty {
            trailing.append(("EXAMPLES", examples.map { "  \($0)" }.joined(separator: "\n")))
        }
        return HelpText.render(
            usage: usage, summary: details, optionGroups: [("OPTIONS", options), ("GLOBAL OPTIONS", GlobalOptions.specs)],
            trailingSections: trailing)
    }
}
