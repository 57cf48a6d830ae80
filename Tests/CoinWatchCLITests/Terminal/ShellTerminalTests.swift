import CoinWatchTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The interactive shell driven through a pseudo-terminal.
@Suite("Shell on a terminal", .timeLimit(.minutes(2)))
struct ShellTerminalTests {
    static let up = "\u{1B}[A"

    @Test("completion, running commands, history recall across sessions, Ctrl-D")
    func session() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let prompt = "\(server.address)> "

        let first = try startOnTerminal(["shell"], server: server.address, home: home.path)
        let before = first.initialAttributes
        try await first.waitFor(prompt)
        first.type("pri\t")
        try await first.waitForScreen("prices completed") { $0.shows(prompt + "prices ") }
        first.type("\u{15}hea\t")
        try await first.waitForScreen("health completed") { $0.shows(prompt + "health ") }
        first.type("\r")
        try await first.waitFor("SERVING — coinwatchd")
        try await first.waitForScreen("a new prompt") { $0.shows(prompt) }

        first.type("settings s\t")
        try await first.waitForScreen("set completed") { $0.shows(prompt + "settings set ") }
        first.type("phone-9 BTC --be\t")
        try await first.waitForScreen("--below completed") { $0.shows(prompt + "settings set phone-9 BTC --below ") }
        first.type("64250.5\r")
        try await first.waitFor("BTC     64250.5")

        first.type("settings get nobody\r")
        try await first.waitFor("error: NOT_FOUND: no settings for device 'nobody'")
        try await first.waitForScreen("a new prompt") { $0.shows(prompt) }

        first.type(Self.up)
        try await first.waitForScreen("the last line recalled") { $0.shows(prompt + "settings get nobody") }
        first.type(Self.up + Self.up)
        try await first.waitForScreen("an older line") { $0.shows(prompt + "health") }
        first.type("\u{3}")
        try await first.waitForScreen("a cancelled line") { $0.shows(prompt) }

        first.type("\u{4}")
        #expect(try await first.waitForExit() == 0)
        #expect(sameTerminalSettings(first.attributes, before), "termios restored")

        let history = try String(contentsOfFile: home.path + "/.coinwatch_history", encoding: .utf8)
        #expect(history == "health\nsettings set phone-9 BTC --below 64250.5\nsettings get nobody\n")

        let second = try startOnTerminal([], server: server.address, home: home.path)
        try await second.waitFor(prompt)
        second.type(Self.up)
        try await second.waitForScreen("history from the first session") { $0.shows(prompt + "settings get nobody") }
        second.type("\u{1}\u{B}exit\r")
        #expect(try await second.waitForExit() == 0)
    }

    @Test("line editing keys: arrows, home/end, delete, Ctrl-W, Ctrl-U")
    func editing() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let prompt = "\(server.address)> "
        let terminal = try startOnTerminal(["shell"], server: server.address, home: home.path)
        try await terminal.waitFor(prompt)
        terminal.type("halth\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[De")
        try await terminal.waitForScreen("an inserted letter") { $0.cursorLine == prompt + "health" && $0.cursorColumn == prompt.count + 2 }
        terminal.type("\u{1B}[F x\u{1B}[H\u{1B}[3~")
        try await terminal.waitForScreen("edits at both ends") { $0.cursorLine == prompt + "ealth x" && $0.cursorColumn == prompt.count }
        terminal.type("\u{5}\u{17}\u{17}")
        try await terminal.waitForScreen("two words cut") { $0.shows(prompt) }
        terminal.type("health junk\u{15}health\r")
        try await terminal.waitFor("SERVING")
        // Typed ahead in one burst: the second line waits for the first to finish, nothing is lost.
        terminal.type("settings get ahead-1\rsettings get ahead-2\r")
        try await terminal.waitFor("error: NOT_FOUND: no settings for device 'ahead-2'")
        #expect(terminal.screen.text.contains("error: NOT_FOUND: no settings for device 'ahead-1'"))
        terminal.type("quit\r")
        #expect(try await terminal.waitForExit() == 0)
    }

    @Test("help in the shell; SIGTERM at the prompt ends it with 143 and the terminal restored")
    func helpAndTerminate() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let prompt = "\(server.address)> "
        let terminal = try startOnTerminal([], server: server.address, home: home.path, rows: 80)
        try await terminal.waitFor(prompt)
        terminal.type("help\r")
        try await terminal.waitFor("COMMANDS (typed without `coinwatch`):")
        try await terminal.waitForScreen("a new prompt") { $0.shows(prompt) }
        // The shell's own short help: commands as typed here, no CLI usage line or JSON reference.
        #expect(terminal.screen.text.contains("  settings set DEVICE SYMBOL"))
        #expect(!terminal.screen.text.contains("USAGE: coinwatch"))
        #expect(!terminal.screen.text.contains("JSON OUTPUT"))
        // A usage error points at that command's help, as typed in the shell.
        terminal.type("settings get\r")
        try await terminal.waitFor("Type 'help settings get' for its options.")
        #expect(terminal.screen.text.contains("USAGE: settings get DEVICE"))
        #expect(!terminal.screen.text.contains("coinwatch help"))
        kill(terminal.pid, SIGTERM)
        #expect(try await terminal.waitForExit() == 143)
        #expect(sameTerminalSettings(terminal.attributes, terminal.initialAttributes))
    }

    @Test("symbols complete from the server's; watch in the shell returns to the prompt on Ctrl-C")
    func symbolsAndStreams() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let prompt = "\(server.address)> "
        try await publish(["BTC", "64250.5", "BCH", "400", "ETH", "3000"], to: server)
        let terminal = try startOnTerminal(["shell"], server: server.address, home: home.path)
        let before = terminal.initialAttributes
        try await terminal.waitFor(prompt)

        terminal.type("prices e\t")
        try await terminal.waitForScreen("ETH completed") { $0.shows(prompt + "prices ETH ") }
        terminal.type("b\t")
        try await terminal.waitForScreen("the choices listed") { $0.text.contains("BCH  BTC") }
        terminal.type("t\t\r")
        try await terminal.waitForScreen("the prices of ETH and BTC") { screen in
            screen.lines.contains { $0.hasPrefix("BTC     64250.5") } && screen.lines.contains { $0.hasPrefix("ETH      3000") }
        }

        terminal.type("watch BTC\r")
        try await terminal.waitForScreen("the dashboard") { $0.usingAlternateScreen && $0.text.contains("64250.5") }
        terminal.type("\u{3}")
        try await terminal.waitForScreen("back at the prompt") { !$0.usingAlternateScreen && $0.shows(prompt) }
        #expect(terminal.screen.cursorVisible)

        terminal.type("health\r")
        try await terminal.waitFor("SERVING")
        terminal.type("\u{4}")
        #expect(try await terminal.waitForExit() == 0)
        #expect(sameTerminalSettings(terminal.attributes, before))
    }

    @Test("alerts in the shell: they show as they fire, and Ctrl-C returns to the prompt")
    func alertsInShell() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let prompt = "\(server.address)> "
        try await publish(["BTC", "65000"], to: server)
        let terminal = try startOnTerminal(["shell"], server: server.address, home: home.path)
        try await terminal.waitFor(prompt)
        terminal.type("settings set phone-7 BTC --below 64000\r")
        try await terminal.waitFor("BTC     64000")
        terminal.type("alerts phone-7\r")
        try await publish(["BTC", "63999.5"], to: server)
        try await terminal.waitFor("BTC  ▼ below 64000  price 63999.5  id=")
        terminal.type("\u{3}")
        try await terminal.waitForScreen("back at the prompt") { $0.shows(prompt) }
        terminal.type("exit\r")
        #expect(try await terminal.waitForExit() == 0)
    }
}
