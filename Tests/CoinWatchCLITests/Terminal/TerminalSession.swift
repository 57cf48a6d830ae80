import CoinWatchTestSupport
import Foundation

/// Starts `coinwatch` on a pseudo-terminal with a private HOME (for its history file).
func startOnTerminal(
    _ arguments: [String], server: String, home: String, rows: Int = 24, columns: Int = 100,
    environment extra: [String: String] = [:]
) throws -> PseudoTerminal {
    var environment = CLIProcess.environment(server: server, home: home, extra: extra)
    environment["TERM"] = "xterm-256color"
    return try PseudoTerminal(try CLIProcess.binary(), arguments: arguments, environment: environment, rows: rows, columns: columns)
}
