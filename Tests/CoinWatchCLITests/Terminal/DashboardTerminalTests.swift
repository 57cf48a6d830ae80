import CoinWatchTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The live dashboard driven through a pseudo-terminal: what a person sees, types and resizes.
@Suite("Dashboard on a terminal", .timeLimit(.minutes(2)))
struct DashboardTerminalTests {
    @Test("prices, change arrows and sparkline; resize; Ctrl-C restores the terminal exactly")
    func dashboard() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        try await publish(["BTC", "64000", "ETH", "3000.5"], to: server)

        let terminal = try startOnTerminal(["watch"], server: server.address, home: home.path, rows: 20, columns: 100)
        let before = terminal.initialAttributes
        try await terminal.waitForScreen("the full-screen dashboard") { $0.usingAlternateScreen && !$0.cursorVisible }
        try await terminal.waitFor("● connected to \(server.address)")
        try await terminal.waitForScreen("a BTC row") { screen in screen.lines.contains { $0.hasPrefix("BTC     64000") } }
        #expect(!sameTerminalSettings(terminal.attributes, before), "raw mode while the dashboard runs")

        try await publish(["BTC", "64250.5", "ETH", "2990"], to: server)
        try await terminal.waitForScreen("BTC up and ETH down") { screen in
            screen.lines.contains { $0.hasPrefix("BTC     64250.5  ▲ +250.5  +0.39%") }
                && screen.lines.contains { $0.hasPrefix("ETH      2990    ▼  -10.5  -0.35%") }
        }
        let wide = terminal.screen.lines
        #expect(wide[0].hasPrefix("coinwatch watch — \(server.address) — 2 symbols"))
        #expect(wide[1].hasSuffix("TREND"))
        #expect(wide.contains { $0.hasPrefix("BTC ") && $0.hasSuffix("▁█") })
        #expect(wide[19].hasPrefix("● connected"), "the status line is the last row")

        terminal.resize(rows: 12, columns: 50)
        try await terminal.waitForScreen("the narrow layout") { screen in
            screen.lines[1].hasPrefix("SYMBOL") && !screen.lines[1].contains("TREND") && screen.lines[11].hasPrefix("● connected")
        }
        #expect(terminal.screen.lines.allSatisfy { $0.count < 50 })

        terminal.type("\u{3}")
        let status = try await terminal.waitForExit()
        #expect(status == 130)
        #expect(sameTerminalSettings(terminal.attributes, before), "termios restored exactly")
        #expect(!terminal.screen.usingAlternateScreen)
        #expect(terminal.screen.cursorVisible)
        let output = terminal.outputText
        let leave = try #require(output.range(of: "\u{1B}[?1049l", options: .backwards))
        let show = try #require(output.range(of: "\u{1B}[?25h", options: .backwards))
        #expect(show.lowerBound < leave.lowerBound, "cursor shown, then the alternate screen left")
        #expect(output[leave.upperBound...].isEmpty, "nothing drawn after leaving")
    }

    @Test("q quits with status 0")
    func quit() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let terminal = try startOnTerminal(["watch", "BTC"], server: server.address, home: home.path)
        let before = terminal.initialAttributes
        try await terminal.waitFor("waiting for prices…")
        try await publish(["BTC", "1.25"], to: server)
        try await terminal.waitFor("1.25")
        terminal.type("q")
        #expect(try await terminal.waitForExit() == 0)
        #expect(sameTerminalSettings(terminal.attributes, before))
        #expect(!terminal.screen.usingAlternateScreen)
    }

    @Test("the dashboard shows it is reconnecting when the server goes away and recovers when it is back")
    func reconnect() async throws {
        var server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        try await publish(["BTC", "100"], to: server)
        let terminal = try startOnTerminal(["watch"], server: server.address, home: home.path)
        try await terminal.waitForScreen("a BTC row") { screen in screen.lines.contains { $0.hasPrefix("BTC") } }

        await server.stop()
        try await terminal.waitFor("○ reconnecting in ")
        #expect(terminal.screen.lines.contains { $0.hasPrefix("BTC") }, "the last prices stay on screen")

        server = try await server.restart()
        try await publish(["BTC", "101"], to: server)
        try await terminal.waitForScreen("the reconnected stream") { screen in
            screen.text.contains("● connected") && screen.text.contains("reconnected 1×")
                && screen.lines.contains { $0.hasPrefix("BTC") && $0.contains(" 101  ▲ +1  +1.00%") }
        }
        terminal.type("q")
        #expect(try await terminal.waitForExit() == 0)
    }

    @Test("SIGTERM leaves the dashboard cleanly too")
    func terminated() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let home = try TemporaryDirectory(prefix: "coinwatch-home")
        let terminal = try startOnTerminal(["watch"], server: server.address, home: home.path)
        let before = terminal.initialAttributes
        try await terminal.waitForScreen("the dashboard") { $0.usingAlternateScreen }
        kill(terminal.pid, SIGTERM)
        #expect(try await terminal.waitForExit() == 143)
        #expect(sameTerminalSettings(terminal.attributes, before))
        #expect(!terminal.screen.usingAlternateScreen && terminal.screen.cursorVisible)
    }
}
