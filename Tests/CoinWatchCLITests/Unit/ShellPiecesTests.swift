@testable import CoinWatchCLI
import CoinWatchCommandLine
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("Shell pieces")
struct ShellPiecesTests {
    @Test("words split like a POSIX shell's")
    func words() throws {
        #expect(try ShellWords.split("  settings  set 'my device' BTC --below \"60 000\" a\\ b ") == [
            "settings", "set", "my device", "BTC", "--below", "60 000", "a b",
        ])
        #expect(try ShellWords.split("x '' \"\"") == ["x", "", ""])
        #expect(try ShellWords.split("") == [])
        #expect(throws: UsageError("unterminated ' quote")) { try ShellWords.split("get 'abc") }
        #expect(throws: UsageError("a line cannot end with a backslash")) { try ShellWords.split("get \\") }
    }

    let symbols = ["BTC", "BCH", "ETH", "DOGE"]

    func complete(_ line: String) -> Completer.Completion { Completer.complete(line, symbols: symbols) }

    @Test("commands, subcommands and help topics")
    func commands() {
        #expect(complete("pri").candidates == ["prices"])
        #expect(complete("pri").replacement == "prices ")
        #expect(complete("p").candidates == ["prices", "publish"])
        #expect(complete("p").replacement == nil)
        #expect(complete("settings ").candidates == ["delete", "get", "set"])
        #expect(complete("settings s").replacement == "set ")
        #expect(complete("help sett").candidates == ["settings"])
        #expect(complete("help settings g").candidates == ["get"])
        #expect(complete("ex").candidates == ["exit"])
    }

    @Test("options of the command being typed, global ones included")
    func options() {
        #expect(complete("settings set phone BTC --be").candidates == ["--below"])
        #expect(complete("watch --int").candidates == ["--interval"])
        #expect(complete("prices --j").candidates == ["--json"])
        #expect(complete("prices --be").candidates == [])
    }

    @Test("symbols where the grammar takes one, case-insensitively")
    func symbolCompletion() {
        #expect(complete("prices b").candidates == ["BCH", "BTC"])
        #expect(complete("prices bt").replacement == "BTC ")
        #expect(complete("watch BTC e").candidates == ["ETH"])
        #expect(complete("watch --interval 1s d").candidates == ["DOGE"])
        #expect(complete("watch --interval ").candidates == [])
        #expect(complete("settings set phone-1 e").candidates == ["ETH"])
        #expect(complete("settings set ").candidates == [])
        #expect(complete("publish BTC 1 E").candidates == ["ETH"])
        #expect(complete("publish BTC ").candidates == [])
        #expect(complete("settings get ").candidates == [])
        #expect(Completer.slot("prices ") == .symbol)
        #expect(Completer.slot("alerts ") == .free)
    }

    @Test("history file round trip, bounded, private")
    func historyFile() throws {
        let directory = try TemporaryDirectory(prefix: "coinwatch-history")
        let file = HistoryFile(path: directory.path + "/history", limit: 3)
        #expect(file.load() == [])
        file.save(["a", "b", "c", "d"])
        #expect(file.load() == ["b", "c", "d"])
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(HistoryFile.inHome(environment: ["HOME": "/home/x"])?.path == "/home/x/.coinwatch_history")
        #expect(HistoryFile.inHome(environment: [:]) == nil)
    }

    @Test("a huge or damaged history file costs a bounded read")
    func historyFileBounded() throws {
        let directory = try TemporaryDirectory(prefix: "coinwatch-history")
        let path = directory.path + "/history"
        var text = String(repeating: "x", count: 10_000) + "\n"
        for index in 0..<5000 { text += "line \(index)\n" }
        text += "bad \u{0}\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let entries = HistoryFile(path: path, limit: 100, maxReadBytes: 4096).load()
        #expect(entries.count <= 100)
        #expect(entries.last == "line 4999")
        #expect(!entries.contains { $0.count > HistoryFile.maxEntryLength })
    }
}
