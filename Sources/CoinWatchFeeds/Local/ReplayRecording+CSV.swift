import CoinWatchModel
import Foundation

extension ReplayRecording {
    private static let timestampNames: Set<String> = ["timestamp", "time", "time_ms", "ts", "t"]
    private static let symbolNames: Set<String> = ["symbol", "s"]
    private static let priceNames: Set<String> = ["price", "p"]

    /// `timestamp,symbol,price` rows after a header naming the columns.
    static func parseCSV(_ lines: [(number: Int, text: Substring)], _ diagnostics: inout Diagnostics) -> [ReplayEvent] {
        guard let first = lines.first else { return [] }
        var columns = (timestamp: 0, symbol: 1, price: 2)
        var rows = lines[...]
        let header = fields(first.text).map { $0.lowercased() }
        if let timestamp = header.firstIndex(where: timestampNames.contains),
           let symbol = header.firstIndex(where: symbolNames.contains),
           let price = header.firstIndex(where: priceNames.contains)
        {
            columns = (timestamp, symbol, price)
            rows = rows.dropFirst()
        } else if header.contains(where: { symbolNames.contains($0) || priceNames.contains($0) }) {
            diagnostics.skip(line: first.number, "the header must name timestamp, symbol and price columns")
            rows = rows.dropFirst()
        } else {
            diagnostics.note(line: first.number, "no header line; reading columns as timestamp,symbol,price")
        }
        let needed = max(columns.timestamp, columns.symbol, columns.price) + 1
        var events: [ReplayEvent] = []
        events.reserveCapacity(rows.count)
        for (number, text) in rows {
            let row = fields(text)
            guard row.count >= needed else {
                diagnostics.skip(line: number, "expected at least \(needed) comma-separated fields, found \(row.count)")
                continue
            }
            let symbol: Symbol
            do {
                symbol = try SymbolMap().asset(String(row[columns.symbol]))
            } catch {
                diagnostics.skip(line: number, error.description)
                continue
            }
            switch (timestamp(row[columns.timestamp]), price(row[columns.price])) {
            case (.success(let time), .success(let price)):
                events.append(ReplayEvent(timeMs: time, symbol: symbol, price: price, line: number))
            case (.failure(let problem), _), (_, .failure(let problem)):
                diagnostics.skip(line: number, problem.reason)
            }
        }
        return events
    }

    /// Comma-separated fields, trimmed, with surrounding double quotes removed.
    private static func fields(_ line: Substring) -> [Substring] {
        line.split(separator: ",", omittingEmptySubsequences: false).map { field in
            var value = field.trimmingCharacters(in: .whitespaces)[...]
            if value.count >= 2, value.first == "\"", value.last == "\"" {
                value = value.dropFirst().dropLast()
            }
            return value
        }
    }
}
