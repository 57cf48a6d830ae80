public import CoinWatchCore

/// A request field that breaks one of CoinWatch's rules.
///
/// Carries the field's name and the rule in words so the wire error
/// (INVALID_ARGUMENT) tells the caller exactly what to fix, e.g.
/// `device_id: must be 1–128 characters of A-Z a-z 0-9 . _ : -`.
public struct ValidationError: CoinWatchError {
    /// The one kind of validation error: the rule in `rule` says what is wrong.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// A field breaks one of the rules of the schema.
        public static let invalidField = Code("invalidField")
    }

    /// The field as named in the schema, with a path where useful (`set_rules[BTC].below`).
    public let field: String
    /// The rule that was broken.
    public let rule: String

    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }

    public var code: Code { .invalidField }

    /// `field: rule`, the sentence an `INVALID_ARGUMENT` reply carries.
    public var message: String { "\(field): \(rule)" }

    public var description: String { message }
}
