import CoinWatchLogging
import CoinWatchModel

/// A JSON object built field by field, printed with its fields in the order they were added.
///
/// `--json` output is read by scripts, so its shape is part of the interface: fixed snake_case names,
/// a stable order, and decimals as JSON strings (`"64250.5"`) so that no JSON parser turns a price
/// into a binary float.
struct JSONObject: Sendable, Hashable, CustomStringConvertible {
    private var fields: [(key: String, json: String)] = []

    init() {}

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.description == rhs.description }

    func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Adds a field whose value is already JSON text.
    mutating func raw(_ key: String, _ json: String) {
        fields.append((key, json))
    }

    mutating func string(_ key: String, _ value: String) {
        raw(key, JSONText.quote(value))
    }

    mutating func integer<I: BinaryInteger>(_ key: String, _ value: I) {
        raw(key, String(value))
    }

    mutating func bool(_ key: String, _ value: Bool) {
        raw(key, value ? "true" : "false")
    }

    /// A decimal as a JSON string, or `null` when absent.
    mutating func decimal(_ key: String, _ value: ExactDecimal?) {
        raw(key, value.map { JSONText.quote($0.description) } ?? "null")
    }

    mutating func object(_ key: String, _ value: JSONObject) {
        raw(key, value.description)
    }

    mutating func array(_ key: String, _ values: [JSONObject]) {
        raw(key, "[" + values.map(\.description).joined(separator: ",") + "]")
    }

    /// Compact JSON on one line, so streams print one object per line.
    var description: String {
        "{" + fields.map { JSONText.quote($0.key) + ":" + $0.json }.joined(separator: ",") + "}"
    }
}
