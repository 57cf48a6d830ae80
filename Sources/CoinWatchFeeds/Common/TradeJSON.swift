import CoinWatchProto

/// How the feeds read JSON: one exchange message (a line of a recorded trade stream, or a WebSocket text message)
/// with the project's one tokenizer, `JSONReader`, under the rules below.
///
/// A venue's reader walks the message with the reader, which builds no tree: it takes the few fields it needs where
/// they stand and skips the rest, so a trade costs no allocation. Numbers are kept as their bytes, so a price such
/// as `64250.50` reaches `ExactDecimal` digit for digit instead of passing through a `Double`. Messages are read
/// leniently: their UTF-8 is checked before (by the WebSocket client, by the replay's file reader), and exchanges'
/// lone surrogates and leading zeros are taken rather than losing the message. Nesting is bounded by `maxDepth`, and
/// input size and string length by the caller's limit (the replay's line limit, the WebSocket message limit), so
/// hostile input costs at most a message's worth of work.
public enum TradeJSON {
    public static let maxDepth = 16

    static let options = JSONReader.Options.lenient(maxDepth: maxDepth)

    /// Reads one whole message (surrounding whitespace allowed): `body` reads or skips its value.
    @inline(__always)
    static func read<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout JSONReader) throws(JSONSyntaxError) -> Result
    ) throws(JSONSyntaxError) -> Result {
        try JSONReader.read(bytes, options: options, body)
    }

    /// Checks a whole message without reading anything out of it.
    static func validate(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
        try JSONReader.validate(bytes, options: options)
    }
}
