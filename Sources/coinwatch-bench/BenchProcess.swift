import Foundation
import Synchronization

/// A helper program the benchmark runs (the mock APNs, coinwatchd, openssl, h2load): its stdout collected line by
/// line, its stdin open for commands, its stderr in a file for failure messages.
final class BenchProcess: Sendable {
    private let process: Process
    private let input: FileHandle
    private let lines = Lines()
    private let finished = DispatchSemaphore(value: 0)
    let errorLog: String

    init(_ path: String, _ arguments: [String], errorLog: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        guard FileManager.default.createFile(atPath: errorLog, contents: nil) else {
            throw BenchError("cannot create \(errorLog)")
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog))
        try process.run()
        self.process = process
        self.input = stdin.fileHandleForWriting
        self.errorLog = errorLog
        let reader = stdout.fileHandleForReading
        let lines = self.lines
        let finished = self.finished
        Thread {
            var pending = Data()
            while true {
                let chunk = reader.availableData
                guard !chunk.isEmpty else { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    lines.value.withLock { $0.append(line) }
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            finished.signal()
        }.start()
    }

    /// Runs `path` to its end and returns its stdout; throws with its stderr if it fails.
    static func run(_ path: String, _ arguments: [String], errorLog: String) throws -> String {
        let child = try BenchProcess(path, arguments, errorLog: errorLog)
        child.closeInput()
        child.finished.wait()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0 else {
            throw BenchError("\(path) \(arguments.joined(separator: " ")) failed: \(child.errors)")
        }
        return child.output.joined(separator: "\n")
    }

    var output: [String] { lines.value.withLock { $0 } }

    var errors: String { (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "" }

    var isRunning: Bool { process.isRunning }

    func write(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    func closeInput() {
        try? input.close()
    }

    func stop() {
        closeInput()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Waits (up to `timeout` seconds) for a stdout line that `match` accepts, among those after the first `skip`.
    func waitForLine(after skip: Int = 0, timeout: Double = 60, _ match: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = output.dropFirst(skip).first(where: match) { return line }
            guard process.isRunning else { throw BenchError("\(process.executableURL!.path) exited: \(errors)") }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw BenchError("\(process.executableURL!.path) did not answer within \(Int(timeout)) s: \(errors)")
    }
}

/// The stdout lines read so far, shared with the reading thread.
private final class Lines: Sendable {
    let value = Mutex<[String]>([])
}
