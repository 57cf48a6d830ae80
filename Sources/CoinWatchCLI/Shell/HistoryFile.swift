#if canImport(Glibc)
import Glibc
#endif

/// The shell's history, kept across sessions in one file (one entry per line, oldest first).
///
/// Bounded on both ends: at most `limit` entries are kept and written, and loading reads only the
/// file's last `maxReadBytes`, so a damaged or huge file costs neither time nor memory.
struct HistoryFile: Sendable {
    static let fileName = ".coinwatch_history"
    static let defaultLimit = 1000
    /// Entries longer than this are not kept (a paste gone wrong, not a command).
    static let maxEntryLength = 4096

    let path: String
    let limit: Int
    let maxReadBytes: Int

    init(path: String, limit: Int = HistoryFile.defaultLimit, maxReadBytes: Int = 1 << 20) {
        self.path = path
        self.limit = limit
        self.maxReadBytes = maxReadBytes
    }

    /// `$HOME/.coinwatch_history`; nil without a usable `HOME` (then history lasts one session).
    static func inHome(environment: [String: String]) -> HistoryFile? {
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return HistoryFile(path: (home.hasSuffix("/") ? home : home + "/") + fileName)
    }

    /// The stored entries, oldest first; empty when there is no file or it cannot be read.
    func load() -> [String] {
        // open(2): a new descriptor we own and close below; -1 when missing or unreadable.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        // lseek(2) to the end tells the size; start reading no earlier than maxReadBytes before it.
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { return [] }
        let start = max(0, Int(size) - maxReadBytes)
        guard lseek(fd, off_t(start), SEEK_SET) >= 0 else { return [] }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count < maxReadBytes {
            let count = read(fd, &buffer, min(buffer.count, maxReadBytes - bytes.count))
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        // Reading from the middle of the file: the first line is probably cut; drop it.
        if start > 0 && !lines.isEmpty { lines.removeFirst() }
        let entries = lines.compactMap { line -> String? in
            guard line.count <= Self.maxEntryLength, let text = String(validating: line, as: UTF8.self) else { return nil }
            return text.allSatisfy({ $0 != "\r" && $0 != "\0" }) ? text : nil
        }
        return Array(entries.suffix(limit))
    }

    /// Replaces the file with the last `limit` of `entries`, atomically (a new file renamed over the
    /// old), readable by the user only. Failures are ignored: history is a convenience.
    func save(_ entries: [String]) {
        let kept = entries.suffix(limit).filter { !$0.contains("\n") && $0.utf8.count <= Self.maxEntryLength }
        var text = kept.joined(separator: "\n")
        if !text.isEmpty { text += "\n" }
        let temporary = path + ".tmp.\(getpid())"
        // open(2) with O_CREAT|O_TRUNC: a descriptor we own and close; mode 0600 since commands may name devices.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var ok = true
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 {
                    ok = false
                    return
                }
                offset += written
            }
        }
        close(fd)
        // rename(2) replaces the old file in one step, so a crash leaves either the old or the new history.
        if !ok || rename(temporary, path) != 0 { unlink(temporary) }
    }
}
