import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a finished `coinwatch` run left behind.
struct CLIResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built `coinwatch` as a user's shell or script would: no terminal, its own environment.
final class CLIProcess: Sendable {
    static let spawnLock = Mutex<Void>(())

    static let defaultTimeout: Duration = .seconds(30)

    private let process: Mutex<Process>
    private let stdoutBytes = Mutex<[UInt8]>([])
    private let stderrBytes = Mutex<[UInt8]>([])

    static func binary() throws -> URL {
        try #require(BuiltProducts.url(of: "coinwatch"), "coinwatch is not built")
    }

    /// A clean environment: no COINWATCH_* from the developer's shell, HOME in a scratch place.
    static func environment(server: String?, home: String, extra: [String: String]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"]
        if let server { environment["COINWATCH_SERVER"] = server }
        environment.merge(extra) { $1 }
        return environment
    }

    /// Starts `coinwatch arguments`; stdin is empty (or `input`).
    init(_ arguments: [String], server: String?, environment extra: [String: String] = [:], input: String? = nil) throws {
        let home = FileManager.default.temporaryDirectory.path
        let process = Process()
        process.executableURL = try Self.binary()
        process.arguments = arguments
        process.environment = Self.environment(server: server, home: home, extra: extra)
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        self.process = Mutex(process)
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.stdoutBytes.withLock { $0 += data }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.stderrBytes.withLock { $0 += data }
        }
        // Foundation's Process.run crashed (a bad memcpy inside it) when several tests
        // started processes at once; starting them one at a time avoids it.
        try CLIProcess.spawnLock.withLock { _ in try process.run() }
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
    }

    var stdout: String { String(decoding: stdoutBytes.withLock { $0 }, as: UTF8.self) }
    var stderr: String { String(decoding: stderrBytes.withLock { $0 }, as: UTF8.self) }

    /// Sends a signal to the process.
    func signal(_ number: Int32) {
        let pid = process.withLock { $0.processIdentifier }
        kill(pid, number)
    }

    /// Waits (bounded) until `condition` holds for stdout.
    func waitForOutput(
        timeout: Duration = CLIProcess.defaultTimeout, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (String) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(stdout) {
            guard ContinuousClock.now < deadline else {
                Issue.record("output never matched; stdout:\n\(stdout)\nstderr:\n\(stderr)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits (bounded; killed after `timeout`) for the exit and returns everything it printed.
    func finish(timeout: Duration = CLIProcess.defaultTimeout) async throws -> CLIResult {
        let deadline = ContinuousClock.now + timeout
        while process.withLock({ $0.isRunning }) {
            if ContinuousClock.now >= deadline {
                signal(SIGKILL)
                Issue.record("coinwatch did not exit within \(timeout); stdout:\n\(stdout)\nstderr:\n\(stderr)")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let status = process.withLock { process -> Int32 in
            process.waitUntilExit()
            return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        }
        // Let the pipe handlers take the last bytes.
        try await Task.sleep(for: .milliseconds(30))
        return CLIResult(status: status, stdout: stdout, stderr: stderr)
    }

    /// Runs `coinwatch arguments` to the end.
    static func run(
        _ arguments: [String], server: String?, environment: [String: String] = [:], input: String? = nil,
        timeout: Duration = CLIProcess.defaultTimeout
    ) async throws -> CLIResult {
        try await CLIProcess(arguments, server: server, environment: environment, input: input).finish(timeout: timeout)
    }
}

/// Publishes ticks through the CLI itself, failing the test if that fails.
func publish(_ pairs: [String], to server: ServerProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let result = try await CLIProcess.run(["publish"] + pairs, server: server.address)
    try #require(result.status == 0, "publish failed: \(result.stderr)", sourceLocation: sourceLocation)
}
