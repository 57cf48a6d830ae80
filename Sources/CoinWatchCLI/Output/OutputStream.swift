#if canImport(Glibc)
import Glibc
#endif

/// Where a command's output goes: a file descriptor written with `write(2)`, unbuffered.
///
/// Streams (`watch`, `alerts`) must show each line as it happens even through a pipe, where stdio would
/// buffer a whole block; writing straight to the descriptor makes every line visible at once and keeps
/// stdout and stderr in the order they were written.
struct OutputStream: Sendable {
    let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    static let standardOutput = OutputStream(descriptor: STDOUT_FILENO)
    static let standardError = OutputStream(descriptor: STDERR_FILENO)

    /// Writes `text` as is.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                // write(2): may write fewer bytes than asked (retry the rest); -1 with EINTR means try again.
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Writes `text` followed by a newline.
    func line(_ text: String) {
        write(text + "\n")
    }

    /// Whether the descriptor is a terminal (isatty(3)).
    var isTerminal: Bool { isatty(descriptor) == 1 }
}
