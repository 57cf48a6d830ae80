/// Finding the command word in a `tool [global options] command [arguments]` line.
///
/// Tools with subcommands take global options before the command and the
/// command's own options anywhere after it. Which options a line may carry is
/// only known once the command is, so the command has to be found first,
/// stepping over global options and the values they take.
extension ParsedArguments {
    /// The index of the first positional argument (the command) of `arguments`, or nil when there is none.
    ///
    /// Value options in `options` skip the argument that follows them (unless given as `--name=value`);
    /// anything after `--` is positional. Unknown options are stepped over, not judged: the full parse
    /// that follows reports them with the command's own usage.
    public static func commandIndex(in arguments: [String], options: [OptionSpec]) -> Int? {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { return index + 1 < arguments.count ? index + 1 : nil }
            if argument == "-" || !argument.hasPrefix("-") || Double(argument) != nil { return index }
            index += 1
            let name: Substring
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if body.contains("=") { continue }
                name = body
            } else {
                guard let spec = options.first(where: { $0.short == argument.dropFirst().first }) else { continue }
                name = Substring(spec.name)
            }
            if let spec = options.first(where: { $0.name == name }), case .value = spec.kind {
                index += 1
            }
        }
        return nil
    }
}
