import CoinWatchModel
import Foundation
import Testing

/// The help texts are the CLI's documentation: each is compared with a file under `Golden/`.
/// Run with `COINWATCH_UPDATE_GOLDEN=1` to rewrite the files after an intended change, then review
/// the diff.
@Suite("Golden help texts")
struct HelpGoldenTests {
    static let cases: [(file: String, arguments: [String])] = [
        ("coinwatch", ["--help"]),
        ("help", ["help"]),
        ("settings", ["settings", "--help"]),
        ("settings-get", ["settings", "get", "--help"]),
        ("settings-set", ["help", "settings", "set"]),
        ("settings-delete", ["settings", "delete", "-h"]),
        ("prices", ["prices", "--help"]),
        ("watch", ["watch", "--help"]),
        ("publish", ["publish", "--help"]),
        ("alerts", ["alerts", "--help"]),
        ("devices", ["devices", "--help"]),
        ("devices-register", ["devices", "register", "--help"]),
        ("devices-show", ["help", "devices", "show"]),
        ("devices-unregister", ["devices", "unregister", "-h"]),
        ("health", ["health", "--help"]),
        ("shell", ["shell", "--help"]),
        ("help-help", ["help", "help"]),
    ]

    static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Golden")

    @Test("help output matches its golden file", arguments: cases.map(\.file))
    func golden(file: String) async throws {
        let arguments = try #require(Self.cases.first { $0.file == file }).arguments
        let result = try await CLIProcess.run(arguments, server: nil)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let url = Self.goldenDirectory.appendingPathComponent("\(file).txt")
        if ProcessInfo.processInfo.environment["COINWATCH_UPDATE_GOLDEN"] == "1" {
            try result.stdout.write(to: url, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(result.stdout == expected, "coinwatch \(arguments.joined(separator: " ")) differs from Golden/\(file).txt")
    }

    @Test("--version")
    func version() async throws {
        let result = try await CLIProcess.run(["--version"], server: nil)
        #expect(result.status == 0)
        #expect(result.stdout == "coinwatch \(CoinWatchVersion.current)\n")
    }

    @Test("help of an unknown command is a usage error")
    func unknownTopic() async throws {
        let result = try await CLIProcess.run(["help", "frobnicate"], server: nil)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: unknown command 'frobnicate'\nUSAGE: coinwatch help"))
    }
}
