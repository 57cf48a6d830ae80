public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A freshly created, empty directory that is removed (with everything in it) when `remove()` is called or the
/// last reference goes away, so tests never see each other's files and leave nothing behind.
public final class TemporaryDirectory: Sendable {
    /// The directory's location.
    public let url: URL

    /// Creates a unique directory under the system temporary directory (`$TMPDIR`, else `/tmp`).
    ///
    /// - Parameter prefix: the start of the directory's name, to tell which test left something behind; must not
    ///   contain `/`.
    public init(prefix: String = "coinwatch") throws {
        guard !prefix.isEmpty, !prefix.contains("/"), !prefix.utf8.contains(0) else {
            throw TemporaryDirectoryError(message: "invalid temporary directory prefix \(prefix.debugDescription)")
        }
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        // mkdtemp: replaces the XXXXXX in place and creates the directory with mode 0700; NULL and errno on failure.
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            let reason = String(cString: strerror(errno))
            throw TemporaryDirectoryError(message: "cannot create a temporary directory in \(base): \(reason)")
        }
        url = URL(fileURLWithPath: String(cString: created), isDirectory: true)
    }

    deinit {
        remove()
    }

    /// The directory's path.
    public var path: String {
        url.path
    }

    /// The location of `name` inside the directory (nothing is created).
    public func appending(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// Deletes the directory and its contents now. Calling it again does nothing.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Why a temporary directory could not be created.
public struct TemporaryDirectoryError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public var description: String {
        message
    }
}

/// Runs `body` with a new empty directory and removes it afterwards, whether `body` returns or throws.
public func withTemporaryDirectory<R>(
    prefix: String = "coinwatch",
    _ body: (URL) throws -> R
) throws -> R {
    let directory = try TemporaryDirectory(prefix: prefix)
    defer { directory.remove() }
    return try body(directory.url)
}

/// Runs `body` with a new empty directory and removes it afterwards, whether `body` returns or throws.
public func withTemporaryDirectory<R>(
    prefix: String = "coinwatch",
    isolation: isolated (any Actor)? = #isolation,
    _ body: (URL) async throws -> R
) async throws -> R {
    let directory = try TemporaryDirectory(prefix: prefix)
    defer { directory.remove() }
    return try await body(directory.url)
}
