import Foundation

/// The `openssl` command-line tool (Debian's `openssl` package), run by tests to check the project's TLS and
/// crypto code against an independent implementation and to make test keys and certificates.
public enum OpenSSLCommand {
    /// What a finished run left behind.
    public struct Result: Sendable {
        /// The exit status (128 + signal for a killed run).
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: String

        /// stdout as text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The tool's path: the first `openssl` on `PATH`, else `/usr/bin/openssl`.
    public static var path: String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        for directory in directories + ["/usr/bin"] {
            let candidate = "\(directory)/openssl"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/usr/bin/openssl"
    }

    /// Runs `openssl arguments…` with `input` on its stdin and waits (up to `timeout`) for it to exit.
    ///
    /// - Throws: `ChildProcessError` if it cannot be started or does not exit in time (it is killed then).
    @discardableResult
    public static func run(
        _ arguments: [String], input: [UInt8] = [], timeout: Duration = .seconds(120)
    ) throws -> Result {
        let child = try ChildProcess(path, arguments)
        child.write(input)
        child.closeInput()
        guard let status = child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            throw ChildProcessError(message: "openssl \(arguments.joined(separator: " ")) did not finish in \(timeout)")
        }
        return Result(status: status, stdout: child.stdoutBytes, stderr: child.stderr)
    }

    /// Runs `openssl arguments…` and requires exit status 0.
    ///
    /// - Throws: `ChildProcessError` naming the command and its stderr otherwise.
    @discardableResult
    public static func succeed(_ arguments: [String], input: [UInt8] = []) throws -> Result {
        let result = try run(arguments, input: input)
        guard result.status == 0 else {
            throw ChildProcessError(
                message: "openssl \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result
    }

    /// `run`, on a thread of its own (see `onOwnThread`): what async tests call.
    @discardableResult
    public static func run(
        _ arguments: [String], input: [UInt8] = [], timeout: Duration = .seconds(120)
    ) async throws -> Result {
        try await onOwnThread { try run(arguments, input: input, timeout: timeout) }
    }

    /// `succeed`, on a thread of its own (see `onOwnThread`): what async tests call.
    @discardableResult
    public static func succeed(_ arguments: [String], input: [UInt8] = []) async throws -> Result {
        try await onOwnThread { try succeed(arguments, input: input) }
    }
}
