/// Renders help in the layout people know from other CLIs: usage line,
/// summary, then aligned options with their environment variables and defaults.
public enum HelpText {
    /// The widest line the option lists are wrapped to: a description that does not fit goes on over the next lines,
    /// in its column.
    public static let width = 100

    public static func render(
        usage: String, summary: String, options: [OptionSpec], sections: [(title: String, body: String)] = []
    ) -> String {
        render(usage: usage, summary: summary, sections: sections, optionGroups: [("OPTIONS", options)])
    }

    /// Help with several option groups (say a command's own options, then the global ones) aligned as one
    /// table, so the eye finds every option's description in the same column, and sections after them
    /// (environment, exit status, examples) for what a reader looks up last.
    public static func render(
        usage: String, summary: String, sections: [(title: String, body: String)] = [],
        optionGroups: [(title: String, options: [OptionSpec])], trailingSections: [(title: String, body: String)] = []
    ) -> String {
        var out = "USAGE: \(usage)\n\n\(summary)\n"
        for section in sections {
            out += "\n\(section.title):\n\(section.body)\n"
        }
        let all = optionGroups.flatMap(\.options)
        let width = min(34, all.map(\.synopsis.count).max() ?? 0)
        for group in optionGroups where !group.options.isEmpty {
            out += "\n\(group.title):\n"
            for option in group.options {
                // The variable and the default are kept whole on a line.
                var words = option.help.split(separator: " ").map(String.init)
                if let environment = option.environment { words.append("[env: \(environment)]") }
                if let value = option.defaultValue { words.append("(default: \(value))") }
                let synopsis = option.synopsis
                let indent = String(repeating: " ", count: width + 4)
                let lines = wrap(words, width: Self.width - indent.count).joined(separator: "\n" + indent)
                if synopsis.count > width {
                    out += "  \(synopsis)\n\(indent)\(lines)\n"
                } else {
                    out += "  \(synopsis)\(String(repeating: " ", count: width - synopsis.count))  \(lines)\n"
                }
            }
        }
        for section in trailingSections {
            out += "\n\(section.title):\n\(section.body)\n"
        }
        return out
    }

    /// `words` in lines of at most `width` characters, joined by spaces (a word longer than that has a line of its
    /// own).
    static func wrap(_ words: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words where !word.isEmpty {
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
