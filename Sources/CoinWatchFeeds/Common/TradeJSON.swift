/// JSON for one exchange message: a line of a recorded trade stream, or a WebSocket text message.
///
/// Messages are read with `Reader`, a pull reader over the message's bytes that builds no tree: a venue's reader
/// takes the few fields it needs where they stand and skips the rest, so a trade costs no allocation. Numbers are
/// kept as their bytes, so a price such as `64250.50` reaches `ExactDecimal` digit for digit instead of passing
/// through a `Double`. Nesting is bounded by `maxDepth`, and input size and string length by the caller's limit
/// (the replay's line limit, the WebSocket message limit), so hostile input costs at most a message's worth of
/// work.
public enum TradeJSON {
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        public let column: Int
        public let reason: String

        public var description: String { "invalid JSON at column \(column): \(reason)" }
    }

    public static let maxDepth = 16
}
