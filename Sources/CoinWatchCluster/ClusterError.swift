public import CoinWatchCore

/// A failure of the cluster layer: NATS, JetStream, or the cluster's own rules.
///
/// Callers branch on `code`: a `conflict` (someone else wrote first) is retried against the current value, an
/// `unavailable` or `timeout` means "may or may not have happened" (as for a failed journal sync), `notFound`
/// is an answer, not a failure.
public struct ClusterError: CoinWatchError {
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// No NATS server (or no JetStream quorum) answered: the operation may or may not have happened.
        public static let unavailable = Code("unavailable")
        /// No answer within the deadline: the operation may or may not have happened.
        public static let timeout = Code("timeout")
        /// A conditional write found another last revision ("wrong last sequence"): someone else wrote first.
        public static let conflict = Code("conflict")
        /// The key, stream or message does not exist.
        public static let notFound = Code("notFound")
        /// An argument (subject, key, option) was refused before anything was sent.
        public static let invalidArgument = Code("invalidArgument")
        /// The connection was closed.
        public static let closed = Code("closed")
        /// Anything else the library or the server reported; the message has its words.
        public static let failed = Code("failed")
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        "\(code): \(message)"
    }
}
