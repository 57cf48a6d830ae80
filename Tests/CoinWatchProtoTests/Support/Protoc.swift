import CoinWatchTestSupport
import Foundation

/// Runs the reference protobuf compiler (`protoc --encode/--decode`) against the repository's schema.
enum Protoc {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The repository root, found from this file's location (Tests/CoinWatchProtoTests/Support/).
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every file of the schema, relative to `proto/`.
    static let protoFiles: [String] = {
        let directory = repositoryRoot.appendingPathComponent("proto/coinwatch/v1")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".proto") }.sorted().map { "coinwatch/v1/" + $0 }
    }()

    /// The `protoc` on PATH; failing, not skipping, when there is none, because CI installs it.
    static func executable() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("protoc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw Failure(
            description: "protoc not found on PATH; the cross-implementation tests need it "
                + "(Debian: apt-get install protobuf-compiler)"
        )
    }

    /// `protoc --encode=<type>`: text format in, binary out.
    static func encode(_ protoName: String, text: String) async throws -> [UInt8] {
        try await run(["--encode=\(protoName)"], input: Data(text.utf8))
    }

    /// `protoc --decode=<type>`: binary in, text format out.
    static func decode(_ protoName: String, bytes: [UInt8]) async throws -> String {
        String(decoding: try await run(["--decode=\(protoName)"], input: Data(bytes)), as: UTF8.self)
    }

    private static func run(_ arguments: [String], input: Data) async throws -> [UInt8] {
        let protoc = try executable()
        let child = try ChildProcess(
            protoc.path,
            arguments + ["--proto_path=\(repositoryRoot.appendingPathComponent("proto").path)"] + protoFiles)
        child.write([UInt8](input))
        child.closeInput()
        guard let status = await child.wait(timeout: .seconds(60)) else {
            throw Failure(description: "protoc \(arguments.joined(separator: " ")) did not finish within 60 s")
        }
        guard status == 0 else {
            throw Failure(description: "protoc \(arguments.joined(separator: " ")) failed: \(child.stderr)")
        }
        return child.stdoutBytes
    }
}
