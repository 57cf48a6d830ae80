/// The result of parsing argv against a list of `OptionSpec`s.
public struct ParsedArguments: Sendable {
    /// Values by option name, after environment and default fallbacks.
    public private(set) var values: [String: String]
    /// Flags that were given (or set to a true value in the environment).
    public private(set) var flags: Set<String>
    /// Arguments that are not options, in order.
    public private(set) var positionals: [String]
    /// Every value given on the command line, by option name, in order (for options that may repeat).
    public private(set) var repeated: [String: [String]] = [:]

    public init(values: [String: String] = [:], flags: Set<String> = [], positionals: [String] = []) {
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }

    public subscript(name: String) -> String? { values[name] }

    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Every value of an option that may be given more than once (`--cors-origin A --cors-origin B`), in order;
    /// without any on the command line, the environment's or default value alone, if there is one.
    public func all(_ name: String) -> [String] {
        repeated[name] ?? values[name].map { [$0] } ?? []
    }

    /// The value of `name` converted by `transform`, or a usage error naming the option.
    public func value<T>(_ name: String, as what: String, _ transform: (String) -> T?) throws(UsageError) -> T? {
        guard let text = values[name] else { return nil }
        guard let converted = transform(text) else {
            throw UsageError("--\(name): '\(text)' is not \(what)")
        }
        return converted
    }

    /// Parses `arguments` (without the program name).
    ///
    /// `--` ends option parsing; `-` alone is a positional. Unknown options are
    /// usage errors so a typo never silently falls back to a default.
    public static func parse(
        _ arguments: [String], options: [OptionSpec], environment: [String: String] = [:]
    ) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        func spec(named name: String) throws(UsageError) -> OptionSpec {
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'")
            }
            return spec
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else {
                let letter = argument.dropFirst()
                guard letter.count == 1, let found = options.first(where: { $0.short == letter.first }) else {
                    // A negative number such as -5 is a positional (e.g. a price).
                    if Double(argument) != nil {
                        result.positionals.append(argument)
                        continue
                    }
                    throw UsageError("unknown option '\(argument)'")
                }
                name = found.name
            }
            let option = try spec(named: name)
            switch option.kind {
            case .flag:
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                result.flags.insert(name)
            case .value:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                result.values[name] = value
                result.repeated[name, default: []].append(value)
            }
        }
        for option in options {
            switch option.kind {
            case .value:
                if result.values[option.name] == nil {
                    result.values[option.name] = option.environment.flatMap { environment[$0] } ?? option.defaultValue
                }
            case .flag:
                if let variable = option.environment, let text = environment[variable],
                   ["1", "true", "yes", "on"].contains(text.lowercased()) {
                    result.flags.insert(option.name)
                }
            }
        }
        return result
    }
}
