public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the package's built executables are, for tests that run them as users do.
///
/// Tests run inside the test bundle, which SwiftPM puts next to the executables in
/// `<scratch>/<triple>/<configuration>/`; the bundle's own path is therefore the reliable anchor, with
/// `COINWATCH_TEST_BIN_DIR` to point elsewhere (say, at installed binaries) and the package's
/// `.build/` as a last resort.
public enum BuiltProducts {
    /// The built executable `name`: the first candidate directory that has it.
    public static func url(of name: String) -> URL? {
        for directory in candidateDirectories {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static var candidateDirectories: [URL] {
        var directories = [URL]()
        if let override = ProcessInfo.processInfo.environment["COINWATCH_TEST_BIN_DIR"], !override.isEmpty {
            directories.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        // The test runner itself: `<…>/debug/CoinWatchPackageTests.xctest` (a file on Linux, a bundle elsewhere).
        let runners: [String?] = [CommandLine.arguments.first, Bundle.main.executablePath, Bundle.main.bundlePath]
        for path in runners.compactMap({ $0 }) {
            var url = URL(fileURLWithPath: path).resolvingSymlinksInPath()
            if let bundle = url.pathComponents.firstIndex(where: { $0.hasSuffix(".xctest") }) {
                // The directory that holds the bundle.
                let parent = "/" + url.pathComponents[1..<bundle].joined(separator: "/")
                url = URL(fileURLWithPath: parent, isDirectory: true)
            } else {
                url.deleteLastPathComponent()
            }
            directories.append(url)
        }
        // The package's own build directory: this file is Tests/CoinWatchTestSupport/ServerProcess.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            directories.append(root.appendingPathComponent(".build/\(configuration)"))
        }
        return directories
    }
}

extension BuiltProducts {
    /// Whether the built executables run under a sanitizer: scripts/sanitize sets its options for the run, and the
    /// executables it builds are instrumented. Their memory then says nothing about the program's own (freed blocks
    /// wait in AddressSanitizer's quarantine, ThreadSanitizer keeps shadow memory), so tests that measure a server's
    /// resident memory do not run there; LeakSanitizer checks those runs instead.
    public static var areInstrumented: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["ASAN_OPTIONS"] != nil || environment["TSAN_OPTIONS"] != nil
    }
}

/// Why a server process could not be started.
public struct ServerProcessError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public var description: String { message }
}

/// A real `coinwatchd` run for a test: on a free port (or a given one), with its own data directory,
/// stopped with SIGTERM when the test is done with it.
///
/// The port is learnt from the server's startup log line (`listening on 127.0.0.1:PORT`), which it
/// writes to a log file next to the data directory, so no pipe can fill up and stall the server. It is
/// spawned the way a service manager starts a daemon: no signal blocked or ignored (a test runner may
/// block nearly all of them, and children inherit that), so SIGTERM exercises its graceful shutdown.
public final class ServerProcess: Sendable {
    /// How long a start may take before the test fails instead of hanging.
    public static let startTimeout: Duration = .seconds(30)
    /// How long a stop waits for a graceful exit before SIGKILL: generous, since a test that reads the server's last
    /// log line needs the graceful exit to finish, however busy the machine.
    public static let stopTimeout: Duration = .seconds(60)

    public let port: Int
    public let dataDirectory: TemporaryDirectory
    /// The server's log (stdout and stderr), for failure messages.
    public let logPath: String
    /// The child's pid until it has been reaped.
    private let pid: Mutex<pid_t?>

    public var address: String { "127.0.0.1:\(port)" }

    /// Whether a `coinwatchd` binary was built.
    public static var isAvailable: Bool { BuiltProducts.url(of: "coinwatchd") != nil }

    /// Starts `coinwatchd --listen 127.0.0.1:PORT --data <temp> --feed none` plus `arguments`.
    ///
    /// - Parameters:
    ///   - port: 0 for a free port; a fixed one to restart a server where clients expect it.
    ///   - dataDirectory: reuse a data directory (a restart); a new one when nil.
    ///   - launcher: a command that runs coinwatchd, such as `["/usr/bin/taskset", "-c", "0"]`.
    ///   - environment: variables set for coinwatchd beside the test process's own.
    public static func start(
        port: Int = 0, dataDirectory: TemporaryDirectory? = nil, arguments: [String] = [],
        launcher: [String] = [], environment: [String: String] = [:]
    ) async throws -> ServerProcess {
        guard let binary = BuiltProducts.url(of: "coinwatchd") else {
            throw ServerProcessError(
                message: "coinwatchd is not built (looked in \(BuiltProducts.candidateDirectories.map(\.path)))")
        }
        let data = try dataDirectory ?? TemporaryDirectory(prefix: "coinwatchd-test")
        let logPath = data.path + "-\(UUID().uuidString).log"
        let command = launcher + [binary.path, "--listen", "127.0.0.1:\(port)", "--data", data.path + "/db",
                                  "--feed", "none"] + arguments
        let pid = try spawn(command[0], Array(command.dropFirst()), log: logPath, environment: environment)
        let deadline = ContinuousClock.now + startTimeout
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let found = listeningPort(in: text) {
                return ServerProcess(port: found, dataDirectory: data, logPath: logPath, pid: pid)
            }
            var status: Int32 = 0
            // waitpid(WNOHANG): 0 while the child runs, its pid once it has exited (and is now reaped).
            if waitpid(pid, &status, WNOHANG) == pid {
                throw ServerProcessError(message: "coinwatchd exited before listening:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // The deadline may have passed while this task waited for a thread (a busy
        // test run): look once more before giving up.
        if let found = listeningPort(in: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "") {
            return ServerProcess(port: found, dataDirectory: data, logPath: logPath, pid: pid)
        }
        // Not listening in time: take it down (reaped by stop) and say what it logged.
        let failed = ServerProcess(port: port, dataDirectory: data, logPath: logPath, pid: pid)
        await failed.stop()
        throw ServerProcessError(message: "coinwatchd did not report listening within \(startTimeout):\n\(failed.log)")
    }

    private init(port: Int, dataDirectory: TemporaryDirectory, logPath: String, pid: pid_t) {
        self.port = port
        self.dataDirectory = dataDirectory
        self.logPath = logPath
        self.pid = Mutex(pid)
    }

    deinit {
        stopAndReap()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// Starts `path` with stdin from /dev/null, stdout and stderr appended to `log`, and `environment` added to
    /// this process's variables.
    static func spawn(_ path: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws
        -> pid_t
    {
        let variables = environment.isEmpty
            ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        do {
            return try ChildProcess.spawn(path, arguments, environment: variables) { actions in
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            }
        } catch {
            throw ServerProcessError(message: error.message)
        }
    }

    /// The port in a `listening on HOST:PORT` log line.
    static func listeningPort(in log: String) -> Int? {
        guard let range = log.range(of: "listening on ") else { return nil }
        let rest = log[range.upperBound...].prefix { !$0.isWhitespace }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)...])
    }

    /// The ports in every `listening on HOST:PORT` log line, in order: one per `--listen`.
    static func listeningPorts(in log: String) -> [Int] {
        var ports = [Int]()
        var rest = Substring(log)
        while let range = rest.range(of: "listening on ") {
            rest = rest[range.upperBound...]
            if let port = listeningPort(in: "listening on " + rest) { ports.append(port) }
        }
        return ports
    }

    /// The ports of every listener the server has reported so far, in `--listen` order (the first is `port`).
    public var ports: [Int] { Self.listeningPorts(in: log) }

    /// Sends `signal` (SIGHUP, say) to the server.
    public func send(_ signal: Int32) {
        if let current = pid.withLock({ $0 }) { kill(current, signal) }
    }

    /// Whether the process is still running (reaping it if it has exited).
    var isRunning: Bool {
        pid.withLock { pid in
            guard let current = pid else { return false }
            var status: Int32 = 0
            // waitpid(WNOHANG): 0 while the child runs, its pid once it has exited (and is now reaped).
            if waitpid(current, &status, WNOHANG) == current {
                pid = nil
                return false
            }
            return true
        }
    }

    /// Sends SIGTERM and returns at once, so a test can watch the graceful shutdown; `stop()` then waits for the exit.
    public func terminate() {
        if let current = pid.withLock({ $0 }) { kill(current, SIGTERM) }
    }

    /// Stops the server with SIGTERM (SIGKILL if it has not exited within `stopTimeout`) and reaps it. The wait runs
    /// on a thread of its own: a graceful shutdown takes a while on a busy machine, and a test waiting on one of the
    /// task pool's few threads would hold back every test beside it.
    public func stop() async {
        _ = try? await onOwnThread { self.stopAndReap() }
    }

    /// `stop()` for a `defer`, where a test cannot wait: a thread of its own sends SIGTERM, waits for the exit (with
    /// the SIGKILL after `stopTimeout`) and reaps it. One signal only: a second SIGTERM makes coinwatchd exit at once.
    public func stopInBackground() {
        guard pid.withLock({ $0 }) != nil else { return }
        Thread { self.stopAndReap() }.start()
    }

    /// SIGTERM, then waits (blocking) for the exit, with SIGKILL after `stopTimeout`, and reaps the process.
    private func stopAndReap() {
        guard let current = pid.withLock({ $0 }) else { return }
        kill(current, SIGTERM)
        let deadline = ContinuousClock.now + Self.stopTimeout
        while isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        if isRunning {
            kill(current, SIGKILL)
            pid.withLock { pid in
                var status: Int32 = 0
                waitpid(current, &status, 0)
                pid = nil
            }
        }
    }

    /// Kills the server with SIGKILL, as a crash or an OOM killer would, and reaps it:
    /// nothing of the graceful shutdown runs.
    public func crash() {
        pid.withLock { pid in
            guard let current = pid else { return }
            kill(current, SIGKILL)
            var status: Int32 = 0
            waitpid(current, &status, 0)
            pid = nil
        }
    }

    /// Runs `coinwatchd` with `arguments` to completion (e.g. `repair`) and returns
    /// its exit status and output.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String) {
        guard let binary = BuiltProducts.url(of: "coinwatchd") else {
            throw ServerProcessError(message: "coinwatchd is not built")
        }
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("coinwatchd-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let child = try spawn(binary.path, arguments, log: logPath)
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(child, &status, WNOHANG) != child {
            guard ContinuousClock.now < deadline else {
                kill(child, SIGKILL)
                waitpid(child, &status, 0)
                throw ServerProcessError(message: "coinwatchd \(arguments) did not finish within \(timeout)")
            }
            usleep(10_000)
        }
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        // WEXITSTATUS, spelled out: the macro does not import.
        return ((status >> 8) & 0xFF, output)
    }

    /// `run(_:timeout:)` for async code: the same run, on a thread of its own, so that it holds none of the task
    /// pool's few threads.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, output: String)
    {
        try await onOwnThread { try run(arguments, timeout: timeout) }
    }

    /// Stops this server and starts a new one on the same port with the same data.
    public func restart() async throws -> ServerProcess {
        await stop()
        return try await Self.start(port: port, dataDirectory: dataDirectory)
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
