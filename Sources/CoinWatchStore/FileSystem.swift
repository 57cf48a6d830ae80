#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The few file-system questions LevelDB's API cannot answer without side effects.
enum FileSystem {
    /// Whether `path` names an existing directory (following symbolic links).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return false
        }
        return info.st_mode & S_IFMT == S_IFDIR
    }
}
