/// One command-line option: its spelling, its environment variable and its help.
///
/// The server, the CLI and the benchmark tool all take options the same way
/// (`--name value`, `--name=value`, boolean `--flag`, an environment variable as
/// fallback), so they share these declarations instead of each parsing argv.
public struct OptionSpec: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Takes a value: `--listen 127.0.0.1:7878` or `--listen=…`.
        case value(placeholder: String)
        /// A switch: present or not.
        case flag
    }

    /// The long name without dashes, e.g. `listen`.
    public let name: String
    /// An optional one-letter alias, e.g. `h` for `-h`.
    public let short: Character?
    public let kind: Kind
    /// The environment variable consulted when the option is absent, e.g. `COINWATCH_LISTEN`.
    public let environment: String?
    /// The value used when neither the option nor the environment gives one.
    public let defaultValue: String?
    public let help: String

    public init(
        _ name: String, short: Character? = nil, _ kind: Kind, environment: String? = nil,
        default defaultValue: String? = nil, help: String
    ) {
        self.name = name
        self.short = short
        self.kind = kind
        self.environment = environment
        self.defaultValue = defaultValue
        self.help = help
    }

    /// `--listen HOST:PORT` / `--json`, as shown in help.
    var synopsis: String {
        let long: String
        switch kind {
        case .value(let placeholder): long = "--\(name) \(placeholder)"
        case .flag: long = "--\(name)"
        }
        return short.map { "-\($0), \(long)" } ?? long
    }
}
