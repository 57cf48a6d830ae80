public import CoinWatchModel
import Foundation

/// One recorded trade of a replay file.
public struct ReplayEvent: Sendable, Hashable {
    /// When it was recorded, in milliseconds since the Unix epoch: sets the replay's pace.
    public var timeMs: Int64
    public var symbol: Symbol
    public var price: ExactDecimal
    /// The 1-based line of the file it came from.
    public var line: Int

    public init(timeMs: Int64, symbol: Symbol, price: ExactDecimal, line: Int) {
        self.timeMs = timeMs
        self.symbol = symbol
        self.price = price
        self.line = line
    }
}

/// The trades of a replay file, parsed up front so a bad file is reported at startup rather than mid-replay.
///
/// Two formats, told apart by the first line that is not blank or a `#` comment:
/// - CSV with a header naming the columns `timestamp,symbol,price` (any order; `time`/`t`/`time_ms`, `s`, `p` are
///   accepted too), timestamps in milliseconds since the epoch;
/// - JSON lines as exchanges stream trades, read by the live venues' adapters: Finnhub's `{"type":"trade","data":
///   [{"p":…,"s":"BINANCE:BTCUSDT","t":…}]}`, Binance's `{"e":"trade","s":"BTCUSDT","p":"64250.50","T":…}` (also
///   wrapped as a combined stream `{"stream":…,"data":{…}}`), Coinbase's `{"type":"match","product_id":"BTC-USD",
///   "price":"64250.5","time":"…"}` and Kraken v2's `{"channel":"trade","data":[{"symbol":"BTC/USD","price":…,
///   "timestamp":"…"}]}`. Other message types (pings, heartbeats, acknowledgements) are passed over.
///
/// Prices are read from their text exactly. Lines that cannot be used are skipped, counted and reported with their
/// line number; nothing in a file can crash the parser.
public struct ReplayRecording: Sendable {
    public enum Format: String, Sendable, Hashable {
        case csv
        case jsonLines = "json-lines"
    }

    /// Larger files are refused: the whole recording is held in memory.
    public static let maxFileBytes = 256 << 20
    /// Longer lines are skipped.
    public static let maxLineBytes = 64 << 10
    /// Warnings kept beyond the count.
    public static let maxWarnings = 20

    /// The file path, or a name for text parsed directly.
    public var source: String
    public var format: Format
    public var events: [ReplayEvent]
    /// Lines skipped as malformed (a JSON line counts once even if several of its trades were bad).
    public var skippedLines: Int
    /// The first `maxWarnings` reasons, each starting with `line N:`.
    public var warnings: [String]

    /// The symbols the recording trades, sorted.
    public var symbols: [Symbol] {
        Array(Set(events.map(\.symbol))).sorted()
    }

    /// Reads and parses a file.
    public static func load(path: String) throws(FeedError) -> ReplayRecording {
        let size: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw FeedError(code: .unreadable, message: "replay file \(path): \(Self.reason(error))")
        }
        guard size <= maxFileBytes else {
            throw FeedError(
                code: .tooLarge,
                message: "replay file \(path) has \(size) bytes; at most \(maxFileBytes) can be replayed")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FeedError(code: .unreadable, message: "replay file \(path): \(Self.reason(error))")
        }
        return ReplayRecording(parsing: String(decoding: data, as: UTF8.self), source: path)
    }

    /// Parses the text of a recording.
    public init(parsing text: String, source: String = "<text>") {
        self.source = source
        var diagnostics = Diagnostics()
        var lines: [(number: Int, text: Substring)] = []
        var number = 0
        for slice in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            var line = Substring(slice)
            if line.utf8.last == 0x0D { line = line.dropLast() }
            guard line.utf8.count <= Self.maxLineBytes else {
                diagnostics.skip(line: number, "longer than \(Self.maxLineBytes) bytes")
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            lines.append((number, line))
        }
        let isJSON = lines.first.map { $0.text.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("{") } ?? false
        format = isJSON ? .jsonLines : .csv
        events = isJSON ? Self.parseJSONLines(lines, &diagnostics) : Self.parseCSV(lines, &diagnostics)
        skippedLines = diagnostics.skippedLines
        warnings = diagnostics.warnings
        if diagnostics.omittedWarnings > 0 {
            warnings.append("… and \(diagnostics.omittedWarnings) more")
        }
    }

    /// Counts skipped lines and keeps the first reasons.
    struct Diagnostics {
        var skippedLines = 0
        var warnings: [String] = []
        var omittedWarnings = 0
        private var lastSkippedLine = 0

        mutating func skip(line: Int, _ reason: String) {
            if line != lastSkippedLine {
                skippedLines += 1
                lastSkippedLine = line
            }
            note(line: line, reason)
        }

        mutating func note(line: Int, _ reason: String) {
            if warnings.count < ReplayRecording.maxWarnings {
                warnings.append("line \(line): \(reason)")
            } else {
                omittedWarnings += 1
            }
        }
    }

    /// Why one line (or one trade of a line) cannot be replayed.
    struct LineProblem: Error, Hashable, Sendable {
        let reason: String

        init(_ reason: String) {
            self.reason = reason
        }
    }

    /// A positive exact price from number or string text.
    static func price(_ text: Substring) -> Result<ExactDecimal, LineProblem> {
        do {
            let value = try TradeNumber.exactDecimal(text.trimmingCharacters(in: .whitespaces)[...])
            guard value > .zero else { return .failure(LineProblem("price must be greater than 0 (got \(value))")) }
            return .success(value)
        } catch {
            return .failure(LineProblem("price \(error.description)"))
        }
    }

    /// Whole milliseconds since the epoch.
    static func timestamp(_ text: Substring) -> Result<Int64, LineProblem> {
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            return .failure(LineProblem("timestamp '\(text)' is not whole milliseconds since the epoch"))
        }
        return .success(value)
    }

    private static func reason(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }
}
