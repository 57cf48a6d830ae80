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

    init(code: Code, message: String, usage: String? = nil) {
        self.code = code
        self.message = message
        self.usage = usage
    }

    var description: String { message }

    /// A usage error with the usage of the command it concerns.
    static func usage(_ message: String, _ usage: String) -> CLIError {
        CLIError(code: .usage, message: message, usage: usage)
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

    /// Failing to connect, as one line naming the address and what to check.
    ///
    /// The client's UNAVAILABLE message reads `cannot connect to ADDR: connect failed: Connection refused
    /// (errno 111) [ADDR]`; the reason is lifted out of it so the line stays short, falling back to the
    /// whole message for shapes it does not recognise (a failed handshake, say).
    static func unreachable(address: String, _ error: RPCError) -> CLIError {
        CLIError(
            code: .unreachable,
            message: "cannot reach coinwatchd at \(address): \(connectFailureReason(error.message))"
                + " — is it running? (--server / COINWATCH_SERVER)")
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
    func cliError(usage: String) -> CLIError { .usage(message, usage) }
}
