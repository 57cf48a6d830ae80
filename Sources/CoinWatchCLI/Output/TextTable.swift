/// A plain-text table with a header row, columns separated by two spaces.
///
/// Prices in a column are aligned on their decimal point (`64250.5` over `3120.25`), the way a
/// person scans figures, without ever rounding them to a common number of places.
struct TextTable: Sendable {
    enum Alignment: Sendable {
        case left, right
        /// Decimal numbers lined up on the point; other text right-aligned.
        case decimal
    }

    let headers: [String]
    let alignments: [Alignment]
    private(set) var rows: [[String]] = []

    init(headers: [String], alignments: [Alignment]) {
        precondition(headers.count == alignments.count, "one alignment per column")
        self.headers = headers
        self.alignments = alignments
    }

    mutating func append(_ row: [String]) {
        precondition(row.count == headers.count, "one cell per column")
        rows.append(row)
    }

    /// The table, one line per row (header first), without trailing spaces.
    func render() -> String {
        var columns = [[String]](repeating: [], count: headers.count)
        for index in headers.indices {
            let cells = rows.map { $0[index] }
            columns[index] = alignments[index] == .decimal ? Self.alignDecimals(cells) : cells
        }
        var widths = headers.map(\.count)
        for index in headers.indices {
            widths[index] = max(widths[index], columns[index].map(\.count).max() ?? 0)
        }
        var lines = [String]()
        func line(_ cells: [String], header: Bool) -> String {
            var parts = [String]()
            for (index, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                let alignLeft = alignments[index] == .left || (header && index == 0)
                parts.append(alignLeft ? cell + padding : padding + cell)
            }
            return trimTrailing(parts.joined(separator: "  "))
        }
        lines.append(line(headers, header: true))
        for row in 0..<rows.count {
            lines.append(line(headers.indices.map { columns[$0][row] }, header: false))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Pads decimal texts so their points line up: integer parts right-aligned, fractions left-aligned. The parts
    /// are at least as wide as the minimums given (a display that keeps its columns still as values change).
    static func alignDecimals(
        _ cells: [String], minimumIntegerWidth: Int = 0, minimumFractionWidth: Int = 0
    ) -> [String] {
        let split = cells.map(decimalParts)
        let integerWidth = max(minimumIntegerWidth, split.map(\.integer.count).max() ?? 0)
        let fractionWidth = max(minimumFractionWidth, split.map(\.fraction.count).max() ?? 0)
        return split.map { integer, fraction in
            String(repeating: " ", count: integerWidth - integer.count) + integer + fraction
                + String(repeating: " ", count: fractionWidth - fraction.count)
        }
    }

    /// `-12.5` → (`-12`, `.5`): the text before the point and from the point on.
    static func decimalParts(_ cell: String) -> (integer: String, fraction: String) {
        guard let point = cell.firstIndex(of: ".") else { return (cell, "") }
        return (String(cell[..<point]), String(cell[point...]))
    }

    private func trimTrailing(_ text: String) -> String {
        var text = Substring(text)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
