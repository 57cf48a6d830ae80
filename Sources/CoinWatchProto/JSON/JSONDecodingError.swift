public import CoinWatchCore

/// Why a JSON document did not decode as a message.
///
/// Like `WireDecodingError`, it carries enough to answer a caller precisely (`INVALID_ARGUMENT` naming the type,
/// the field and the rule) and nothing of the decoder's internals.
public struct JSONDecodingError: CoinWatchError {
    /// The category of the failure. Extensible: new codes may be added, so switch with a default.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// Not JSON (RFC 8259): a stray character, an unterminated string, invalid UTF-8, a lone surrogate.
        public static let syntax = Code("syntax")

        /// The document is longer than the decoder was allowed to accept.
        public static let tooLarge = Code("tooLarge")

        /// Arrays and objects nest deeper than the decoder allows.
        public static let tooDeep = Code("tooDeep")

        /// A value of the wrong JSON type for its field (a number where an object belongs, null in a list).
        public static let wrongType = Code("wrongType")

        /// A member that names no field of the message (and unknown fields were not to be ignored).
        public static let unknownField = Code("unknownField")

        /// The same field twice (under either of its names), or two fields of one oneof.
        public static let duplicateField = Code("duplicateField")

        /// An integer outside its field's range, or not an integer at all (`1.5`).
        public static let outOfRange = Code("outOfRange")

        /// A value the field's type cannot hold: bad base64, an unknown enum name, a string holding U+0000.
        public static let invalidValue = Code("invalidValue")
    }

    /// The category.
    public var code: Code

    /// The fully qualified name of the message being decoded, e.g. `coinwatch.v1.SaveSettingsRequest`.
    public var typeName: String

    /// What was wrong, without the location (e.g. `expected a string, got a number`).
    public var detail: String

    /// Path pieces from the innermost outwards (`.below`, `["BTC"]`, `.setRules`), joined when read.
    var reversedPath: [String] = []

    public init(code: Code, typeName: String, detail: String) {
        self.code = code
        self.typeName = typeName
        self.detail = detail
    }

    /// The JSON path of the offending value from `typeName` (e.g. `setRules["BTC"].below.mantissa`), when one is
    /// to blame.
    public var fieldPath: String? {
        guard !reversedPath.isEmpty else { return nil }
        let joined = reversedPath.reversed().joined()
        return joined.hasPrefix(".") ? String(joined.dropFirst()) : joined
    }

    /// A human-readable explanation that names the type and, when known, the field.
    public var message: String {
        let subject = fieldPath.map { "\(typeName).\($0)" } ?? typeName
        return "\(subject): \(detail)"
    }

    public var description: String {
        "\(code): \(message)"
    }

    /// The same error, located one field further out.
    func inField(_ jsonName: String) -> Self {
        var copy = self
        copy.reversedPath.append("." + jsonName)
        return copy
    }

    /// The same error, located in a map entry.
    func inEntry(_ key: String) -> Self {
        var copy = self
        var quoted: [UInt8] = []
        JSONWriter.appendQuoted(key, to: &quoted)
        copy.reversedPath.append("[" + String(decoding: quoted, as: UTF8.self) + "]")
        return copy
    }

    /// The same error, located in a list element.
    func inElement(_ index: Int) -> Self {
        var copy = self
        copy.reversedPath.append("[\(index)]")
        return copy
    }
}
