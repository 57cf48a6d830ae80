import CoinWatchTestSupport
import Foundation
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
    static let defaultTimeout: Duration = .seconds(30)

    private let child: ChildProcess

    static func binary() throws -> URL {
        try #require(BuiltProducts.url(of: "coinwatch"), "coinwatch is not built")
    }

    /// A clean environment: no COINWATCH_* from the developer's shell, HOME in a scratch place. Sanitizer settings
    /// carry over, so that under scripts/sanitize an instrumented `coinwatch` uses the run's suppressions (a report
    /// makes it exit 66 instead of its own status) without printing them into the output the tests compare.
    static func environment(server: String?, home: String, extra: [String: String]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"]
        let inherited = ProcessInfo.processInfo.environment
        for name in ["TSAN_OPTIONS", "ASAN_OPTIONS", "LSAN_OPTIONS"] {
            if let value = inherited[name] { environment[name] = value + " print_suppressions=0" }
        }
        if let value = inherited["SWIFT_BACKTRACE"] { environment["SWIFT_BACKTRACE"] = value }
        if let server { environment["COINWATCH_SERVER"] = server }
        // A generous call deadline: on a busy machine a durable save in a debug build can take seconds. Tests of
        // the deadline itself pass their own --timeout.
        environment["COINWATCH_TIMEOUT"] = "60s"
        environment.merge(extra) { $1 }
        return environment
    }

    /// Starts `coinwatch arguments`; stdin is empty (or `input`).
    init(_ arguments: [String], server: String?, environment extra: [String: String] = [:], input: String? = nil) throws {
        let home = FileManager.default.temporaryDirectory.path
        child = try ChildProcess(
            try Self.binary().path, arguments, environment: Self.environment(server: server, home: home, extra: extra))
        if let input { child.write(Array(input.utf8)) }
        child.closeInput()
    }

    var stdout: String { child.stdout }
    var stderr: String { child.stderr }

    /// Sends a signal to the process.
    func signal(_ number: Int32) {
        child.signal(number)
    }

    /// Waits (bounded) until `condition` holds for stdout.
    func waitForOutput(
        timeout: Duration = CLIProcess.defaultTimeout, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (String) -> Bool
    ) async throws {
        try await wait(until: condition(stdout), "output", timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Waits (bounded) until `condition` holds for stderr.
    func waitForError(
        timeout: Duration = CLIProcess.defaultTimeout, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (String) -> Bool
    ) async throws {
        try await wait(until: condition(stderr), "stderr", timeout: timeout, sourceLocation: sourceLocation)
    }

    private func wait(
        until condition: @autoclosure () -> Bool, _ what: String, timeout: Duration, sourceLocation: SourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(what) never matched; stdout:\n\(stdout)\nstderr:\n\(stderr)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits (bounded; killed after `timeout`) for the exit and returns everything it printed.
    func finish(timeout: Duration = CLIProcess.defaultTimeout) async throws -> CLIResult {
        let deadline = ContinuousClock.now + timeout
        while child.exitStatus == nil {
            if ContinuousClock.now >= deadline {
                child.signal(SIGKILL)
                Issue.record("coinwatch did not exit within \(timeout); stdout:\n\(stdout)\nstderr:\n\(stderr)")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        // Reaps a killed child and waits for the last bytes of its output.
        let status = try #require(child.wait(timeout: .seconds(10)), "coinwatch did not exit after SIGKILL")
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
