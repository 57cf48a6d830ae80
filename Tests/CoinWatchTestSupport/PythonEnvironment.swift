public import Foundation

/// The repository's Python test environment (`scripts/python-env`): made once per test run. `scripts/test` makes
/// it before the Swift suite, so here it is normally only found; a first use that has to install it takes minutes,
/// which is why callers reach it from a thread of their own (`onOwnThread`).
public enum PythonEnvironment {
    /// The repository root: this file is Tests/CoinWatchTestSupport/PythonEnvironment.swift.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private static let made: Result<String, PythonEnvironmentError> = {
        do {
            let child = try ChildProcess(repositoryRoot.appendingPathComponent("scripts/python-env").path, [])
            guard child.wait(timeout: .seconds(600)) == 0 else {
                return .failure(PythonEnvironmentError(message: "scripts/python-env failed:\n\(child.stderr)"))
            }
            let path = child.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/bin/python"
            return .success(path)
        } catch {
            return .failure(PythonEnvironmentError(message: "cannot run scripts/python-env: \(error)"))
        }
    }()

    /// The environment's python, made on first use.
    public static func python() throws -> String {
        try made.get()
    }
}

public struct PythonEnvironmentError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public var description: String { message }
}
