import CoinWatchCore
import CoinWatchCommandLine
import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

/// Everything a command can fail with, reduced to what the user needs: a kind that picks the exit
/// status and a one-line message. The runner prints it; no failure ever reaches the user as a trace.
struct CLIError: CoinWatchError {
    /// What kind of failure, which decides the exit status.
    struct Code: ErrorCode {
        let name: String
        /// The process's exit status for this kind.
        let exitStatus: Int32
        /// The signal that stopped the command, if one did.
        let signal: Int32?

        private init(_ name: String, exitStatus: Int32, signal: Int32? = nil) {
            self.name = name
            self.exitStatus = exitStatus
            self.signal = signal
        }

        var description: String { name }

        /// The server answered a call with an error.
        static let rpc = Code("rpc", exitStatus: ExitStatus.rpcError)
        /// The server could not be reached.
        static let unreachable = Code("unreachable", exitStatus: ExitStatus.unreachable)
        /// The command line was wrong; the message is followed by the command's usage.
        static let usage = Code("usage", exitStatus: ExitStatus.usage)
        /// The user pressed Ctrl-C.
        static let interrupted = Code.signal(SIGINT)

        /// Stopped by a signal (SIGINT, SIGTERM, SIGHUP): exits with 128 + the signal, as shells report it.
        static func signal(_ number: Int32) -> Code {
            Code("signal \(number)", exitStatus: 128 + number, signal: number)
        }
    }

    let code: Code
    /// One line for a person, without the `error: ` prefix.
    let message: String
    /// For usage errors: the usage of the command that was mistyped, printed after the message.
    let usage: String?
    /// For usage errors: the words after `help` that show the help to read next (`settings set`; empty for the
    /// list of commands).
    let helpTopic: String?

    init(code: Code, message: String, usage: String? = nil, helpTopic: String? = nil) {
        self.code = code
        self.message = message
        self.usage = usage
        self.helpTopic = helpTopic
    }

    var description: String { message }

    /// A usage error with the usage of the command it concerns and the help topic that explains it (`settings set`;
    /// empty for the list of commands).
    static func usage(_ message: String, _ usage: String, helpTopic: String = "") -> CLIError {
        CLIError(code: .usage, message: message, usage: usage, helpTopic: helpTopic)
    }

    /// A usage error of `command`: its usage, and its help to read next.
    static func usage(_ message: String, of command: CommandSpec) -> CLIError {
        .usage(message, command.usage, helpTopic: command.name)
    }

    static let interrupted = CLIError(code: .interrupted, message: "interrupted")

    /// Stopped by `signal`; Ctrl-C (SIGINT) reads as "interrupted".
    static func stopped(by signal: Int32) -> CLIError {
        signal == SIGINT ? .interrupted : CLIError(code: .signal(signal), message: "stopped by signal \(signal)")
    }

    /// An error a call failed with: `NOT_FOUND: no settings for device 'x'`.
    init(_ error: RPCError) {
        self.init(code: .rpc, message: "\(error.code): \(error.message)")
    }

    /// Failing to connect, as one line naming the address once and what to check.
    ///
    /// The client's UNAVAILABLE message reads `cannot connect to ADDR: connect failed: Connection refused
    /// (errno 111)`; the reason is lifted out of it so the line stays short, falling back to the whole
    /// message for shapes it does not recognise (a failed handshake, say), which then names the address
    /// itself. What to check follows from the reason: the host name when it does not resolve, the address
    /// when something answered that is not coinwatchd, else whether the server runs.
    static func unreachable(address: String, _ error: RPCError) -> CLIError {
        let reason = connectFailureReason(error.message)
        let check: String
        if error.message.contains("getaddrinfo failed") {
            check = "check the host name"
        } else if error.message.contains("not coinwatchd") || error.message.hasPrefix("no Welcome from") {
            check = "check the address"
        } else {
            check = "is it running?"
        }
        let place = reason.contains(address) ? "" : " at \(address)"
        return CLIError(
            code: .unreachable,
            message: "cannot reach coinwatchd\(place): \(reason) — \(check) (--server / COINWATCH_SERVER)")
    }

    /// `Connection refused` out of the client's connect error, lower-cased like the rest of the line.
    static func connectFailureReason(_ message: String) -> String {
        var reason = Substring(message)
        if reason.hasPrefix("cannot connect to "), let range = reason.firstRange(of: ": ") {
            reason = reason[range.upperBound...]
        }
        if let failed = reason.firstRange(of: "failed: ") {
            reason = reason[failed.upperBound...]
        }
        if let errno = reason.firstRange(of: " (errno ") {
            reason = reason[..<errno.lowerBound]
        }
        guard let first = reason.first else { return message }
        // "Connection refused" → "connection refused", but keep acronyms such as "DNS" intact.
        let second = reason.dropFirst().first
        if first.isUppercase, second.map({ $0.isLowercase }) ?? true {
            return first.lowercased() + reason.dropFirst()
        }
        return String(reason)
    }
}

extension UsageError {
    /// This usage error with the usage of the command it concerns.
    func cliError(of command: CommandSpec) -> CLIError { .usage(message, of: command) }
}
