public import CoinWatchCore

/// Why the alert engine refused a configuration, a rule, a price or a state to load.
///
/// Refusals leave the engine exactly as it was.
public struct AlertEngineError: CoinWatchError {
    /// What kind of refusal this is; new kinds may be added, so switch with a default.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The hysteresis band is outside `0 ≤ h < 1`.
        public static let invalidConfiguration = Code("invalid configuration")

        /// A tick's price is zero or negative: a broken feed, which must not fire every `below` rule.
        public static let invalidPrice = Code("invalid price")

        /// A threshold is negative.
        public static let invalidRule = Code("invalid rule")

        /// The same rule or arm state appears twice in a load.
        public static let duplicateRecord = Code("duplicate record")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
