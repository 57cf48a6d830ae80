public import CoinWatchCore

/// Why bytes are not JSON as `JSONReader` reads them: where (a byte offset) and why.
///
/// Callers present the place in their own terms: the feeds as a 1-based column of the message
/// (`description`), the proto3 JSON mapping as a byte offset inside its `JSONDecodingError`, whose codes these are.
public struct JSONSyntaxError: CoinWatchError {
    /// Where the reader stopped, from the start of the bytes it was given (0 for the first byte).
    public var offset: Int

    /// What was wrong there, e.g. `expected ',' or '}' in an object`.
    public var reason: String

    /// A flag rather than the code itself: every throwing call of the reader carries room for this error, and the
    /// venues' readers measured faster with it small.
    var isTooDeep: Bool

    /// `.syntax`, or `.tooDeep` for a value nested deeper than the reader's `maxDepth`.
    public var code: JSONDecodingError.Code { isTooDeep ? .tooDeep : .syntax }

    /// The 1-based column of the offending byte in a one-line message.
    public var column: Int { offset + 1 }

    public var message: String { "invalid JSON at column \(column): \(reason)" }

    /// The message alone (no code in front): venue errors and replay warnings quote it as it stands.
    public var description: String { message }
}
