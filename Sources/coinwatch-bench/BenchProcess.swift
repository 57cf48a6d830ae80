import Foundation

/// A helper process of a benchmark (coinwatchd, a fake exchange): its output goes to a file the benchmark reads,
/// its stdin is a pipe for commands, and it is killed when the benchmark is done with it.
final class BenchProcess: @unchecked Sendable {
    // @unchecked Sendable: the properties are set in init and never reassigned; `Process` and the pipe's file
    // handle are used from one task at a time (the benchmark's steps run one after another).
    let process = Process()
    let outputPath: String
    private let input = Pipe()

    init(_ executable: String, _ arguments: [String], outputPath: String) throws {
        self.outputPath = outputPath
        // The output file is made (or emptied) first: FileHandle(forWritingTo:) opens only a file that exists.
        guard FileManager.default.createFile(atPath: outputPath, contents: nil) else {
            throw BenchError("cannot create \(outputPath) for the output of \(executable)")
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    deinit {
        stop()
    }

    var pid: Int { Int(process.processIdentifier) }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Sends one line on stdin.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Ends its stdin (for a program that reads it to the end).
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Waits (bounded) until `find` extracts something from the output.
    func waitFor<T>(_ what: String, timeout: Double = 30, _ find: (String) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = find(output) { return found }
            guard process.isRunning else { throw BenchError("\(what): the process exited:\n\(output.suffix(2000))") }
            usleep(10_000)
        }
        throw BenchError("\(what): not within \(Int(timeout)) s:\n\(output.suffix(2000))")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
