@testable import CoinWatchCLI
import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Testing

@Suite("Dashboard pieces")
struct DashboardTests {
    func price(_ text: String) -> ExactDecimal { ExactDecimal(text)! }

    @Test("percent change is exact and rounded half away from zero", arguments: [
        ("100", "101", "+1.00%", "+1"),
        ("100", "99.995", "-0.01%", "-0.005"),
        ("3", "4", "+33.33%", "+1"),
        ("3", "5", "+66.67%", "+2"),
        ("64250.5", "64250.5", "0.00%", "0"),
        ("0.00000001", "0.00000002", "+100.00%", "+0.00000001"),
        ("200", "199.99", "-0.01%", "-0.01"),
        ("200", "199.989", "-0.01%", "-0.011"),
    ])
    func percent(first: String, last: String, percent: String, difference: String) {
        let change = PriceChange(from: price(first), to: price(last))
        #expect(change.percentText == percent)
        #expect(change.differenceText == difference)
    }

    @Test("change from zero has no percentage")
    func fromZero() {
        let change = PriceChange(from: .zero, to: price("1"))
        #expect(change.percentText == "—")
        #expect(change.direction == .up)
        #expect(change.arrow == "▲")
        #expect(PriceChange(from: price("2"), to: price("1")).arrow == "▼")
    }

    @Test("sparkline spans ▁ to █ between the window's extremes")
    func sparkline() {
        let prices = ["1", "2", "3", "4", "5", "6", "7", "8"].map(price)
        #expect(Sparkline.render(prices, width: 8) == "▁▂▃▄▅▆▇█")
        #expect(Sparkline.render(prices, width: 3) == "▁▅█")
        #expect(Sparkline.render(["5", "5.0", "5.00"].map(price), width: 10) == "▄▄▄")
        #expect(Sparkline.render([], width: 10) == "")
        // Differences in the 8th decimal still show when they are the extremes.
        #expect(Sparkline.render(["1.00000001", "1.00000002"].map(price), width: 2) == "▁█")
    }

    @Test("rate meter averages over a sliding window and forgets old seconds")
    func rate() {
        var meter = RateMeter()
        for second in 0..<10 {
            for _ in 0..<5 { meter.record(second: second) }
        }
        #expect(meter.perSecond(elapsed: .seconds(10)) == 4.5)
        #expect(meter.perSecond(elapsed: .seconds(30)) == 0)
        var early = RateMeter()
        early.record(second: 0)
        early.record(second: 0)
        #expect(early.perSecond(elapsed: .milliseconds(500)) == 2)
    }

    func update(_ symbol: String, _ text: String, _ sequence: UInt64) -> V1.PriceUpdate {
        V1.PriceUpdate(symbol: symbol, price: V1.Decimal(price(text)), sourceTimeMs: 1, sequence: sequence)
    }

    @Test("a snapshot is not a tick: it is aged from its source time, and a repeat on reconnecting adds nothing")
    func snapshot() {
        let start = ContinuousClock.now
        let wall: Int64 = 1_800_000_000_000
        var model = DashboardModel(server: "h:1", started: start)
        model.streamOpened()
        var first = update("BTC", "64000", 1)
        first.snapshot = true
        first.sourceTimeMs = wall - 60_000
        model.apply(first, at: start, wallClockMs: wall)
        #expect(model.rows["BTC"]?.updates == 0)
        var lines = DashboardView.render(model, now: start, rows: 10, columns: 90, color: false)
        #expect(lines[2].contains("0.0/s"), "\(lines[2])")
        #expect(lines[2].hasSuffix(" 60s") || lines[2].contains(" 60s "), "\(lines[2])")

        model.apply(update("BTC", "64100", 2), at: start + .seconds(1), wallClockMs: wall + 1000)
        #expect(model.rows["BTC"]?.updates == 1)
        #expect(model.rows["BTC"]?.history == ["64000", "64100"].map(price))

        // Reconnected: the snapshot repeats the last price, then one that moved while away.
        model.streamOpened()
        var again = update("BTC", "64100", 1)
        again.snapshot = true
        again.sourceTimeMs = wall + 1000
        model.apply(again, at: start + .seconds(5), wallClockMs: wall + 5000)
        #expect(model.rows["BTC"]?.history == ["64000", "64100"].map(price))
        #expect(model.rows["BTC"]?.updates == 1)
        lines = DashboardView.render(model, now: start + .seconds(5), rows: 10, columns: 90, color: false)
        #expect(lines[2].contains("4.0s"), "\(lines[2])")
        var moved = update("BTC", "64200", 1)
        moved.snapshot = true
        moved.sourceTimeMs = wall + 4000
        model.apply(moved, at: start + .seconds(6), wallClockMs: wall + 6000)
        #expect(model.rows["BTC"]?.history == ["64000", "64100", "64200"].map(price))
        #expect(model.rows["BTC"]?.last == price("64200"))
        #expect(model.rows["BTC"]?.updates == 1)
    }

    @Test("the model counts sequence gaps per stream and keeps the first price across reconnections")
    func model() {
        let start = ContinuousClock.now
        var model = DashboardModel(server: "h:1", started: start)
        model.streamOpened()
        model.apply(update("BTC", "100", 1), at: start, wallClockMs: 0)
        model.apply(update("BTC", "101", 2), at: start, wallClockMs: 0)
        model.apply(update("ETH", "10", 5), at: start, wallClockMs: 0)
        #expect(model.gaps == 2)
        model.streamOpened()
        model.apply(update("BTC", "99", 1), at: start, wallClockMs: 0)
        #expect(model.gaps == 2)
        #expect(model.streams == 2)
        let btc = model.rows["BTC"]!
        #expect(btc.first == price("100"))
        #expect(btc.last == price("99"))
        #expect(btc.history == ["100", "101", "99"].map(price))
        #expect(model.orderedRows.map(\.symbol) == ["BTC", "ETH"])
    }

    func sampleModel(_ start: ContinuousClock.Instant) -> DashboardModel {
        var model = DashboardModel(server: "127.0.0.1:7878", started: start)
        model.streamOpened()
        model.apply(update("BTC", "64000", 1), at: start, wallClockMs: 0)
        model.apply(update("ETH", "3000.5", 2), at: start, wallClockMs: 0)
        model.apply(update("BTC", "64250.5", 3), at: start + .seconds(1), wallClockMs: 0)
        model.apply(update("ETH", "2990", 4), at: start + .seconds(1), wallClockMs: 0)
        model.connection = .connected(server: "127.0.0.1:7878", stream: 1)
        return model
    }

    @Test("a frame fills the screen exactly, one column short of the width")
    func frame() {
        let start = ContinuousClock.now
        let lines = DashboardView.render(sampleModel(start), now: start + .seconds(2), rows: 10, columns: 90, color: false)
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0.count <= 89 })
        #expect(lines[0] == "coinwatch watch — 127.0.0.1:7878 — 2 symbols")
        #expect(lines[1].hasPrefix("SYMBOL    PRICE  CHANGE"))
        #expect(lines[1].hasSuffix("TREND"))
        #expect(lines[2].hasPrefix("BTC     64250.5  ▲ +250.5  +0.39%"))
        #expect(lines[2].hasSuffix("▁█"))
        #expect(lines[3].hasPrefix("ETH      2990    ▼  -10.5  -0.35%"))
        #expect(lines[3].contains("1.0s"))
        #expect(lines[9] == "● connected to 127.0.0.1:7878 · gaps 0 · q quit")
    }

    @Test("a stale symbol says so where its age is, keeps its price and history, and the next price clears it")
    func stale() {
        let start = ContinuousClock.now
        var model = sampleModel(start)
        var mark = update("BTC", "64250.5", 5)
        mark.stale = true
        model.apply(mark, at: start + .seconds(3), wallClockMs: 0)
        var unseen = update("SOL", "145", 6)
        unseen.stale = true
        model.apply(unseen, at: start + .seconds(3), wallClockMs: 0)
        #expect(model.rows["BTC"]?.isStale == true)
        #expect(model.rows["BTC"]?.history == ["64000", "64250.5"].map(price))
        #expect(model.rows["SOL"]?.isStale == true)
        let lines = DashboardView.render(model, now: start + .seconds(4), rows: 10, columns: 90, color: false)
        #expect(lines[2].hasPrefix("BTC     64250.5  ▲ +250.5  +0.39%"))
        #expect(lines[2].contains("STALE 3.0s"))
        #expect(!lines[3].contains("STALE"))
        #expect(lines[4].hasPrefix("SOL") && lines[4].contains("STALE"))
        var fresh = update("BTC", "64300", 7)
        fresh.sources = 3
        model.apply(fresh, at: start + .seconds(5), wallClockMs: 0)
        #expect(model.rows["BTC"]?.isStale == false)
        #expect(model.rows["BTC"]?.sources == 3)
        let after = DashboardView.render(model, now: start + .seconds(5), rows: 10, columns: 90, color: false)
        #expect(!after[2].contains("STALE"))
    }

    @Test("columns keep their place from frame to frame, and percentages line up across rows")
    func stableColumns() {
        let start = ContinuousClock.now
        var model = DashboardModel(server: "127.0.0.1:7878", started: start)
        model.streamOpened()
        model.apply(update("BTC", "64000", 1), at: start, wallClockMs: 0)
        model.apply(update("DOGE", "0.16235", 2), at: start, wallClockMs: 0)
        // BTC's change widens (+1250.75, +1.95%), then narrows again (+0.5): the columns stay where the widest put them.
        model.apply(update("BTC", "65250.75", 3), at: start, wallClockMs: 0)
        model.apply(update("DOGE", "0.1625", 4), at: start, wallClockMs: 0)
        let wide = DashboardView.render(model, now: start, rows: 10, columns: 120, color: false)
        model.apply(update("BTC", "64000.5", 5), at: start, wallClockMs: 0)
        let narrow = DashboardView.render(model, now: start, rows: 10, columns: 120, color: false)
        func column(_ lines: [String], _ prefix: String, _ text: Character) -> Int? {
            lines.first { $0.hasPrefix(prefix) }.flatMap { line in line.firstIndex(of: text).map { line.distance(from: line.startIndex, to: $0) } }
        }
        for text in ["%", "/"] as [Character] {
            #expect(column(wide, "BTC", text) != nil)
            #expect(column(wide, "BTC", text) == column(narrow, "BTC", text), "'\(text)' moved between frames")
            #expect(column(narrow, "BTC", text) == column(narrow, "DOGE", text), "'\(text)' differs between rows")
        }
        #expect(narrow.contains { $0.hasPrefix("BTC     64000.5      ▲    +0.5       0.00%    3.0/s") }, "\(narrow)")
        #expect(narrow.contains { $0.hasPrefix("DOGE        0.1625   ▲    +0.00015  +0.09%    2.0/s") }, "\(narrow)")
    }

    @Test("narrow windows drop the sparkline, short ones say how many rows are hidden")
    func smallWindows() {
        let start = ContinuousClock.now
        let model = sampleModel(start)
        let narrow = DashboardView.render(model, now: start + .seconds(2), rows: 10, columns: 50, color: false)
        #expect(!narrow[1].contains("TREND"))
        #expect(narrow.allSatisfy { $0.count <= 49 })
        let short = DashboardView.render(model, now: start + .seconds(2), rows: 4, columns: 90, color: false)
        #expect(short.count == 4)
        #expect(short[2] == "… 2 more (enlarge the window)")
        #expect(DashboardView.render(model, now: start, rows: 1, columns: 90, color: false).count == 1)
    }

    @Test("the status line shows reconnection countdowns and errors")
    func status() {
        let start = ContinuousClock.now
        var model = sampleModel(start)
        model.connection = .waiting(retryAt: start + .milliseconds(1500), attempt: 2, reason: RPCError(
            code: .unavailable, message: "cannot connect to 127.0.0.1:7878: connect failed: Connection refused (errno 111)"))
        #expect(DashboardView.statusLine(model, now: start).plain
            == "○ reconnecting in 2s… (attempt 2: connection refused) · gaps 0 · q quit")
        model.connection = .ended(RPCError(code: .invalidArgument, message: "bad symbol"))
        #expect(DashboardView.statusLine(model, now: start).plain.hasPrefix("✕ error: INVALID_ARGUMENT: bad symbol"))
    }

    @Test("colour is on by default and off with NO_COLOR or a dumb terminal")
    func color() {
        #expect(Screen.colorEnabled(environment: ["TERM": "xterm"]))
        #expect(!Screen.colorEnabled(environment: ["NO_COLOR": "1"]))
        #expect(!Screen.colorEnabled(environment: ["TERM": "dumb"]))
        let start = ContinuousClock.now
        let colored = DashboardView.render(sampleModel(start), now: start, rows: 6, columns: 90, color: true)
        #expect(colored[2].contains(ANSI.green))
        #expect(colored[3].contains(ANSI.red))
    }

    @Test("a frame is drawn in place without scrolling")
    func screenFrame() {
        #expect(Screen.frame(["a", "b"]) == "\u{1B}[Ha\u{1B}[K\r\nb\u{1B}[K\u{1B}[J")
    }
}
