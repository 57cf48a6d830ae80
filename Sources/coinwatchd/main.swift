import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

let usage = "coinwatchd [options]"
let options: [OptionSpec] = [
    OptionSpec("help", short: "h", .flag, help: "Show this help."),
    OptionSpec("version", .flag, help: "Show the version."),
]

CommandRunner.run(usage: "USAGE: \(usage)") {
    let parsed = try ParsedArguments.parse(Array(CommandLine.arguments.dropFirst()), options: options)
    if parsed.has("help") {
        print(HelpText.render(usage: usage, summary: "Serves device alert settings, live prices and alerts over the CoinWatch protocol.", options: options), terminator: "")
        return 0
    }
    if parsed.has("version") {
        print("coinwatchd \(CoinWatchVersion.current)")
        return 0
    }
    return 0
}
