/// Why the alert engine refused a configuration, a rule, a price or a state to load.
///
/// Refusals leave the engine exactly as it was.
public struct AlertEngineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of refusal this is; new kinds may be added, so switch with a default.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case invalidConfiguration, invalidPrice, invalidRule, duplicateRecord
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The hysteresis band is outside `0 ≤ h < 1`.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A tick's price is zero or negative: a broken feed, which must not fire every `below` rule.
        public static let invalidPrice = Code(.invalidPrice)
        /// A threshold is negative.
        public static let invalidRule = Code(.invalidRule)
        /// The same rule or arm state appears twice in a load.
        public static let duplicateRecord = Code(.duplicateRecord)

        public var description: String {
            switch value {
            case .invalidConfiguration: "invalid configuration"
            case .invalidPrice: "invalid price"
            case .invalidRule: "invalid rule"
            case .duplicateRecord: "duplicate record"
            }
        }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
