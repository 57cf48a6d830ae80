#if canImport(Glibc)
import Glibc
#endif

/// Runs a command's body and turns its failures into the exit statuses the
/// documentation promises, so no user error ever ends in a stack trace.
public enum CommandRunner {
    /// Writes `text` to standard error, adding a newline when missing.
    public static func printError(_ text: String) {
        var line = text.hasSuffix("\n") ? text : text + "\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Runs `body`; a `UsageError` prints its message and `usage` to stderr and exits 64.
    public static func run(usage: String, _ body: () throws -> Int32) -> Never {
        do {
            exit(try body())
        } catch let error as UsageError {
            printError("error: \(error.message)")
            printError(usage)
            exit(UsageError.exitCode)
        } catch {
            printError("error: \(error)")
            exit(1)
        }
    }
}
