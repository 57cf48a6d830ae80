/// The user typed something the command cannot take.
///
/// Commands answer it with the message, the command's usage, and exit status
/// 64 (`EX_USAGE` from sysexits.h), never with a stack trace.
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// `EX_USAGE`.
    public static let exitCode: Int32 = 64
}
