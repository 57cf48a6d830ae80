#if canImport(Glibc)
import Glibc
#endif

/// The text of a small file such as a cgroup setting or a procfs file, read in one go.
///
/// procfs and sysfs files report a size of 0 and are generated as they are read, so the file is read until
/// `read` returns 0 rather than by its size, and at most `limit` bytes are kept.
public enum SmallTextFile {
    /// The file's text (at most `limit` bytes of it), or nil if it cannot be opened or read.
    public static func read(_ path: String, limit: Int = 4096) -> String? {
        // open(2): the fd is ours; the defer closes it on every path.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let (count, code) = bytes.withUnsafeMutableBytes { buffer in
                let count = Glibc.read(fd, buffer.baseAddress! + filled, limit - filled)
                return (count, count < 0 ? errno : 0)
            }
            if code == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            filled += count
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}
