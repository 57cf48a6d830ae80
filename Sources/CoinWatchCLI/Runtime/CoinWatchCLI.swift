import CoinWatchCommandLine
import CoinWatchModel

/// The `coinwatch` program: the executable's `main` is a call to `CoinWatchCLI.main`.
public enum CoinWatchCLI {
    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        _ = Console.shared
        do throws(CLIError) {
            switch try Dispatcher.resolve(arguments, environment: environment) {
            case .overview:
                OutputStream.standardOutput.write(CommandCatalog.overview)
                return ExitStatus.ok
            case .version:
                OutputStream.standardOutput.line("coinwatch \(CoinWatchVersion.current)")
                return ExitStatus.ok
            case .groupHelp(let word):
                OutputStream.standardOutput.write(CommandCatalog.groupHelp(word))
                return ExitStatus.ok
            case .none(let parsed):
                let options = try usage(CommandCatalog.shell) { () throws(UsageError) in try GlobalOptions(parsed) }
                guard Terminal().isInteractive else {
                    throw CLIError.usage(
                        "missing command (the shell starts only on a terminal)", CommandCatalog.overviewUsage)
                }
                return try Shell(options: options, environment: environment).run()
            case .command(let command, let parsed):
                return try Dispatcher.run(command, parsed, inShell: false, environment: environment) {
                    ClientSession(options: $0)
                }
            }
        } catch {
            Dispatcher.report(error)
            return error.code.exitStatus
        }
    }
}
