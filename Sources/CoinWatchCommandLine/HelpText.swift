/// Renders help in the layout people know from other CLIs: usage line,
/// summary, then aligned options with their environment variables and defaults.
public enum HelpText {
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
                var details = option.help
                if let environment = option.environment { details += " [env: \(environment)]" }
                if let value = option.defaultValue { details += " (default: \(value))" }
                let synopsis = option.synopsis
                if synopsis.count > width {
                    out += "  \(synopsis)\n  \(String(repeating: " ", count: width))  \(details)\n"
                } else {
                    out += "  \(synopsis)\(String(repeating: " ", count: width - synopsis.count))  \(details)\n"
                }
            }
        }
        for section in trailingSections {
            out += "\n\(section.title):\n\(section.body)\n"
        }
        return out
    }
}
