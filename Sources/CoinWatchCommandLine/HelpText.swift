/// Renders help in the layout people know from other CLIs: usage line,
/// summary, then aligned options with their environment variables and defaults.
public enum HelpText {
    public static func render(
        usage: String, summary: String, options: [OptionSpec], sections: [(title: String, body: String)] = []
    ) -> String {
        var out = "USAGE: \(usage)\n\n\(summary)\n"
        for section in sections {
            out += "\n\(section.title):\n\(section.body)\n"
        }
        if !options.isEmpty {
            out += "\nOPTIONS:\n"
            let width = min(34, options.map(\.synopsis.count).max() ?? 0)
            for option in options {
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
        return out
    }
}
