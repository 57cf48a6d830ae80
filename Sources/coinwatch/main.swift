import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

let usage = "coinwatch [options] <command> [arguments]"
let options: [OptionSpec] = [
    OptionSpec("help", short: "h", .flag, help: "Show this help."),
    OptionSpec("version", .flag, help: "Show the version."),
]

CommandRunner.run(usage: "USAGE: \(usage)") {
    let parsed = try ParsedArguments.parse(Array(CommandLine.arguments.dropFirst()), options: options)
    if parsed.has("help") {
        print(HelpText.render(usage: usage, summary: "Command-line client for coinwatchd: settings, prices, alerts, a live dashboard and a shell.", options: options), terminator: "")
        return 0
    }
    if parsed.has("version") {
        print("coinwatch \(CoinWatchVersion.current)")
        return 0
    }
    throw UsageError("missing command")
}
