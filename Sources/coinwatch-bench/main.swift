import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

let usage = "coinwatch-bench <unary|stream> --server HOST:PORT [options]"
let options: [OptionSpec] = [
    OptionSpec("help", short: "h", .flag, help: "Show this help."),
    OptionSpec("version", .flag, help: "Show the version."),
]

CommandRunner.run(usage: "USAGE: \(usage)") {
    let parsed = try ParsedArguments.parse(Array(CommandLine.arguments.dropFirst()), options: options)
    if parsed.has("help") {
        print(HelpText.render(usage: usage, summary: "Load generator and latency meter for coinwatchd.", options: options), terminator: "")
        return 0
    }
    if parsed.has("version") {
        print("coinwatch-bench \(CoinWatchVersion.current)")
        return 0
    }
    throw UsageError("missing mode: unary or stream")
}
