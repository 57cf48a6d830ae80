import CoinWatchTestSupport
import Foundation
import Testing

/// The shared helper has no test target of its own; the store tests depend on it most, so it is checked here.
@Suite("Temporary directories")
struct TemporaryDirectoryTests {
    @Test("withTemporaryDirectory gives an empty directory and removes it with its contents")
    func synchronousHelper() throws {
        let seen = try withTemporaryDirectory(prefix: "helper") { url in
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).isEmpty)
            try Data("x".utf8).write(to: url.appendingPathComponent("file"))
            try FileManager.default.createDirectory(
                at: url.appendingPathComponent("sub/dir"),
                withIntermediateDirectories: true
            )
            return url
        }
        #expect(seen.lastPathComponent.hasPrefix("helper."))
        #expect(!FileManager.default.fileExists(atPath: seen.path))
    }

    @Test("The directory is removed when the body throws, and each call gets a new one")
    func removedOnError() throws {
        struct Failure: Error {}
        var first: URL?
        #expect(throws: Failure.self) {
            try withTemporaryDirectory { url in
                first = url
                throw Failure()
            }
        }
        let firstURL = try #require(first)
        #expect(!FileManager.default.fileExists(atPath: firstURL.path))
        try withTemporaryDirectory { url in
            #expect(url != firstURL)
        }
    }

    @Test("The async variant removes the directory after awaiting the body")
    func asynchronousHelper() async throws {
        let seen = try await withTemporaryDirectory { url in
            await Task.yield()
            try Data("x".utf8).write(to: url.appendingPathComponent("file"))
            return url
        }
        #expect(!FileManager.default.fileExists(atPath: seen.path))
    }

    @Test("A TemporaryDirectory object removes itself when released; bad prefixes are rejected")
    func objectLifetime() throws {
        var directory: TemporaryDirectory? = try TemporaryDirectory(prefix: "object")
        let path = try #require(directory?.path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(directory?.appending("name").lastPathComponent == "name")
        directory = nil
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: TemporaryDirectoryError.self) { try TemporaryDirectory(prefix: "a/b") }
        #expect(throws: TemporaryDirectoryError.self) { try TemporaryDirectory(prefix: "") }
    }
}
