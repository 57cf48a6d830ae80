import Foundation

extension BenchProcess {
    /// Runs `executable` to its end and returns its output; throws with that output if it exits unsuccessfully.
    static func run(_ executable: String, _ arguments: [String], outputPath: String) throws -> String {
        let child = try BenchProcess(executable, arguments, outputPath: outputPath)
        child.closeInput()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0 else {
            throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed:\n\(child.output.suffix(2000))")
        }
        return child.output
    }

    /// The complete lines of its output so far (a line still being written is left out).
    var lines: [String] {
        var all = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        all.removeLast()
        return all
    }

    /// Waits (bounded) for a line, among those after the first `skip`, that `match` accepts.
    func waitForLine(after skip: Int = 0, timeout: Double = 60, _ match: (String) -> Bool) throws -> String {
        try waitFor("a line from \(process.executableURL?.lastPathComponent ?? "the process")", timeout: timeout) { _ in
            lines.dropFirst(skip).first(where: match)
        }
    }
}
