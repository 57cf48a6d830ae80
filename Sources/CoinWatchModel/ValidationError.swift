/// A request field that breaks one of CoinWatch's rules.
///
/// Carries the field's name and the rule in words so the wire error
/// (INVALID_ARGUMENT) tells the caller exactly what to fix, e.g.
/// `device_id: must be 1–128 characters of A-Z a-z 0-9 . _ : -`.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field as named in the schema, with a path where useful (`set_rules[BTC].below`).
    public let field: String
    /// The rule that was broken.
    public let rule: String

    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }

    public var description: String { "\(field): \(rule)" }
}
