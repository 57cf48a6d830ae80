import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

CommandRunner.run(usage: "USAGE: \(DaemonOptions.usage)\nRun 'coinwatchd --help' for the options.") {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let parsed = try ParsedArguments.parse(arguments, options: DaemonOptions.all, environment: ProcessEnvironment.current)
    if parsed.has("help") {
        print(DaemonOptions.help, terminator: "")
        return 0
    }
    if parsed.has("version") {
        print("coinwatchd \(CoinWatchVersion.current)")
        return 0
    }
    switch parsed.positionals.first {
    case nil:
        return try Daemon(options: DaemonOptions(parsed)).run()
    case "repair":
        guard parsed.positionals.count == 1 else { throw UsageError("repair takes no arguments; use --data DIR") }
        return Daemon.repair(dataDirectory: parsed["data"]!)
    case let other?:
        throw UsageError("unknown command '\(other)'")
    }
}
