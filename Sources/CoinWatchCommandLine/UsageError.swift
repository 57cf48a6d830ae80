public import CoinWatchCore

/// The user typed something the command cannot take.
///
/// Commands answer it with the message, the command's usage, and exit status
/// 64 (`EX_USAGE` from sysexits.h), never with a stack trace.
public struct UsageError: CoinWatchError {
    /// The one kind of usage error.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The command line does not follow the command's usage.
        public static let usage = Code("usage")
    }

    public var code: Code { .usage }
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// `EX_USAGE`.
    public static let exitCode: Int32 = 64
}
