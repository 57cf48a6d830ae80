import CoinWatchProto

/// A message's `data` array of trades (Finnhub's, Kraken's), read in the same pass as the rest of the message.
///
/// Keys come in any order, so when `data` is reached the message's type may not be known yet. The array is then
/// read as the items the type seen so far (or the likeliest one) calls for, straight into the context's list;
/// when the message's type turns out to want other items, or none were read, `trades` reads the array again. A
/// repeated `data` key replaces the earlier one, as every repeated key does.
struct VenueBatch<Kind: Equatable> {
    typealias Reader = JSONReader
    typealias SyntaxError = JSONSyntaxError
    /// Reads one item: its trade, or why it cannot be used. Only a syntax error is thrown.
    typealias Item = (inout Reader) throws(SyntaxError) -> Result<VenueTrade, VenueParseError>

    /// The last `data` value.
    private(set) var value: JSONReader.Token?
    /// What its items were read as, when they were.
    private var readAs: Kind?

    /// Reads the `data` value at the cursor, its items as `kind` (nil: only check them).
    mutating func read(
        _ reader: inout Reader, _ context: inout VenueReadContext, as kind: Kind?, item: Item
    ) throws(SyntaxError) {
        readAs = nil
        guard let kind, reader.current == UInt8(ascii: "[") else {
            value = try reader.token()
            return
        }
        value = try Self.items(&reader, &context, item)
        readAs = kind
    }

    /// The trades of a message whose type calls for items of `kind`; throws `missing` when `data` is no array.
    mutating func trades(
        as kind: Kind, _ context: inout VenueReadContext, missing: String, item: Item
    ) throws(VenueParseError) -> VenueMessage {
        guard case .array(let array)? = value else { throw VenueParseError(missing) }
        if readAs != kind {
            var reader = array.reader()
            // Checked already: reading it again cannot fail.
            _ = try? Self.items(&reader, &context, item)
            readAs = kind
        }
        return context.message
    }

    private static func items(
        _ reader: inout Reader, _ context: inout VenueReadContext, _ item: Item
    ) throws(SyntaxError) -> JSONReader.Token {
        context.startTrades()
        return try reader.array { (reader, position) throws(SyntaxError) in
            switch try item(&reader) {
            case .success(let trade): context.append(trade)
            case .failure(let problem): context.skip("data[\(position)]: \(problem.message)")
            }
        }
    }
}
