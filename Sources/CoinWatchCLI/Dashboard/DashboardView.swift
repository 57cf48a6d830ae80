import CoinWatchClient
import CoinWatchCore
import CoinWatchModel
import CoinWatchRPC

/// Draws a `DashboardModel` as the lines of one screen.
///
/// Pure: the same model, moment and size give the same lines, which is what the tests check. Lines
/// are kept one column short of the width so the last column never triggers the terminal's pending
/// wrap, and the frame never has more lines than the screen, so it never scrolls.
enum DashboardView {
    /// The widest sparkline drawn, however wide the window.
    static let maxTrendWidth = 60

    static func render(
        _ model: DashboardModel, now: ContinuousClock.Instant, rows: Int, columns: Int, color: Bool
    ) -> [String] {
        let width = max(1, columns - 1)
        guard rows >= 1 else { return [] }
        let status = statusLine(model, now: now).render(width: width, color: color)
        guard rows >= 3 else { return Array(repeating: "", count: rows - 1) + [status] }

        var lines = [String]()
        let symbols = model.rows.count
        var title = StyledLine("coinwatch watch", style: ANSI.bold)
        title.append(" — \(model.server) — \(symbols) symbol\(symbols == 1 ? "" : "s")")
        lines.append(title.render(width: width, color: color))

        let table = self.table(model, now: now, width: width)
        let room = rows - 2
        if table.count <= 1 {
            lines.append(StyledLine("waiting for prices…", style: ANSI.dim).render(width: width, color: color))
        } else if table.count <= room {
            lines += table.map { $0.render(width: width, color: color) }
        } else {
            lines += table.prefix(room - 1).map { $0.render(width: width, color: color) }
            let hidden = table.count - (room - 1)
            let note = StyledLine("… \(hidden) more (enlarge the window)", style: ANSI.dim)
            lines.append(note.render(width: width, color: color))
        }
        while lines.count < rows - 1 { lines.append("") }
        lines.append(status)
        return lines
    }

    /// The header and one line per symbol, columns sized to the widest value they have shown (so they do not move
    /// between frames) with prices and changes aligned on their decimal points and percentages on their right
    /// edge; the sparkline takes the room that is left (and is dropped when there is too little).
    static func table(_ model: DashboardModel, now: ContinuousClock.Instant, width: Int) -> [StyledLine] {
        let rows = model.orderedRows
        let elapsed = now - model.started
        let widths = model.widths
        let prices = TextTable.alignDecimals(
            rows.map(\.last.description), minimumIntegerWidth: widths.priceInteger,
            minimumFractionWidth: widths.priceFraction)
        let differences = TextTable.alignDecimals(
            rows.map(\.change.differenceText), minimumIntegerWidth: widths.changeInteger,
            minimumFractionWidth: widths.changeFraction)
        let percentWidth = max(widths.percent, rows.map(\.change.percentText.count).max() ?? 0)
        let changes = rows.enumerated().map { index, row -> (String, String?) in
            let change = row.change
            let style: String? = change.direction == .up ? ANSI.green : change.direction == .down ? ANSI.red : nil
            let percent = change.percentText
            let padding = String(repeating: " ", count: max(0, percentWidth - percent.count))
            return ("\(change.arrow) \(differences[index])  \(padding)\(percent)", style)
        }
        let rates = rows.map { rateText($0.rate.perSecond(elapsed: elapsed)) }
        // A stale symbol says so where its age is: the age of a price nobody quotes any more.
        let ages = rows.map { row in
            (row.isStale ? "STALE " : "") + TimeText.age(nanoseconds: nanoseconds(now - row.lastArrival))
        }

        let symbolWidth = max(6, rows.map(\.symbol.count).max() ?? 0)
        let priceWidth = max(5, prices.map(\.count).max() ?? 0)
        let changeWidth = max(6, changes.map(\.0.count).max() ?? 0)
        let rateWidth = max(7, rates.map(\.count).max() ?? 0)
        let ageWidth = max(5, ages.map(\.count).max() ?? 0)
        let fixed = symbolWidth + priceWidth + changeWidth + rateWidth + ageWidth + 2 * 5
        let trendWidth = min(maxTrendWidth, width - fixed)
        let showTrend = trendWidth >= 4

        func cell(_ text: String, _ width: Int, right: Bool = false) -> String {
            let padding = String(repeating: " ", count: max(0, width - text.count))
            return right ? padding + text : text + padding
        }
        var header = StyledLine()
        header.append(
            cell("SYMBOL", symbolWidth) + "  " + cell("PRICE", priceWidth, right: true) + "  " + cell("CHANGE", changeWidth)
                + "  " + cell("TICKS/S", rateWidth, right: true) + "  " + cell("AGE", ageWidth, right: true)
                + (showTrend ? "  TREND" : ""),
            style: ANSI.dim)
        var lines = [header]
        for (index, row) in rows.enumerated() {
            var line = StyledLine(cell(row.symbol, symbolWidth), style: ANSI.bold)
            line.append("  " + cell(prices[index], priceWidth, right: true) + "  ")
            line.append(cell(changes[index].0, changeWidth), style: changes[index].1)
            line.append("  " + cell(rates[index], rateWidth, right: true) + "  ")
            line.append(cell(ages[index], ageWidth, right: true), style: row.isStale ? ANSI.yellow : nil)
            if showTrend {
                line.append("  ")
                line.append(Sparkline.render(row.history, width: trendWidth), style: changes[index].1)
            }
            lines.append(line)
        }
        return lines
    }

    /// Connection state, gaps and the way out.
    static func statusLine(_ model: DashboardModel, now: ContinuousClock.Instant) -> StyledLine {
        var line = StyledLine()
        switch model.connection {
        case .connecting:
            line.append("◌ connecting to \(model.server)…", style: ANSI.yellow)
        case .connected(let server, _):
            // The node the stream is on, which in cluster mode need not be the first of --server.
            line.append("● connected to \(server)", style: ANSI.green)
        case .waiting(let retryAt, let attempt, let reason):
            let remaining = max(0, nanoseconds(retryAt - now))
            let seconds = (remaining + 999_999_999) / 1_000_000_000
            let reason = CLIError.connectFailureReason(reason.message)
            line.append("○ reconnecting in \(seconds)s… (attempt \(attempt): \(reason))", style: ANSI.yellow)
        case .ended(let error):
            if let error {
                line.append("✕ error: \(CLIError(error).message)", style: ANSI.red)
            } else {
                line.append("✕ stream ended", style: ANSI.red)
            }
        }
        line.append(" · gaps \(model.gaps)")
        if model.streams > 1 { line.append(" · reconnected \(model.streams - 1)×") }
        line.append(" · q quit", style: ANSI.dim)
        return line
    }

    /// `10.0/s`.
    static func rateText(_ rate: Double) -> String {
        let tenths = Int((rate * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)/s"
    }

    /// Whole nanoseconds of `duration`, 0 when it is negative.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.inNanoseconds))
    }
}
