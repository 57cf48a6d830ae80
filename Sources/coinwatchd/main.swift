import CoinWatchCommandLine
import CoinWatchModel

#if canImport(Glibc)
import Glibc
#endif

CommandRunner.run(usage: "USAGE: \(DaemonOptions.usage)\nRun 'coinwatchd --help' for the options, "
    + "'coinwatchd keys --help' for the credential commands.") {
    let arguments = Array(CommandLine.arguments.dropFirst())
    // Credential commands take options of their own (and none of the server's).
    if let index = ParsedArguments.commandIndex(in: arguments, options: CredentialCommands.options),
       ["keys", "devices"].contains(arguments[index]) {
        return CredentialCommands.run(arguments, environment: ProcessEnvironment.current)
    }
    let parsed = try ParsedArguments.parse(
        arguments, options: DaemonOptions.all + DaemonOptions.cluster, environment: ProcessEnvironment.current)
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
