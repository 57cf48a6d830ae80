import CoinWatchLogging
public import CoinWatchModel

/// A JSON object built field by field, printed with its fields in the order they were added.
///
/// `--json` output is read by scripts, so its shape is part of the interface: fixed snake_case names,
/// a stable order, and decimals as JSON strings (`"64250.5"`) so that no JSON parser turns a price
/// into a binary float.
public struct JSONObject: Sendable, Hashable, CustomStringConvertible {
    private var fields: [(key: String, json: String)] = []

    public init() {}

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.description == rhs.description }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Adds a field whose value is already JSON text.
    public mutating func raw(_ key: String, _ json: String) {
        fields.append((key, json))
    }

    public mutating func string(_ key: String, _ value: String) {
        raw(key, JSONText.quote(value))
    }

    public mutating func integer<I: BinaryInteger>(_ key: String, _ value: I) {
        raw(key, String(value))
    }

    public mutating func bool(_ key: String, _ value: Bool) {
        raw(key, value ? "true" : "false")
    }

    /// A decimal as a JSON string, or `null` when absent.
    public mutating func decimal(_ key: String, _ value: ExactDecimal?) {
        raw(key, value.map { JSONText.quote($0.description) } ?? "null")
    }

    public mutating func object(_ key: String, _ value: JSONObject) {
        raw(key, value.description)
    }

    public mutating func array(_ key: String, _ values: [JSONObject]) {
        raw(key, "[" + values.map(\.description).joined(separator: ",") + "]")
    }

    /// Compact JSON on one line, so streams print one object per line.
    public var description: String {
        "{" + fields.map { JSONText.quote($0.key) + ":" + $0.json }.joined(separator: ",") + "}"
    }
}
