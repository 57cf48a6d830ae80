/// A failure of the cluster layer: NATS, JetStream, or the cluster's own rules.
///
/// Callers branch on `code`: a `conflict` (someone else wrote first) is retried against the current value, an
/// `unavailable` or `timeout` means "may or may not have happened" (as for a failed journal sync), `notFound`
/// is an answer, not a failure.
public struct ClusterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is (a struct of constants, as `StoreError.Code`, so kinds can be added).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: String, Hashable, Sendable {
            case unavailable
            case timeout
            case conflict
            case notFound
            case invalidArgument
            case closed
            case failed
        }

        private let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// No NATS server (or no JetStream quorum) answered: the operation may or may not have happened.
        public static let unavailable = Code(.unavailable)
        /// No answer within the deadline: the operation may or may not have happened.
        public static let timeout = Code(.timeout)
        /// A conditional write found another last revision ("wrong last sequence"): someone else wrote first.
        public static let conflict = Code(.conflict)
        /// The key, stream or message does not exist.
        public static let notFound = Code(.notFound)
        /// An argument (subject, key, option) was refused before anything was sent.
        public static let invalidArgument = Code(.invalidArgument)
        /// The connection was closed.
        public static let closed = Code(.closed)
        /// Anything else the library or the server reported; the message has its words.
        public static let failed = Code(.failed)

        public var description: String {
            wrapped.rawValue
        }
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
