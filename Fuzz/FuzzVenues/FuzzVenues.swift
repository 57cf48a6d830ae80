import CoinWatchFeeds
import CoinWatchModel

/// libFuzzer target: every venue's message reader, and the JSON reader under them.
///
/// Input: a byte choosing the venue (Finnhub, Binance, Coinbase matches or ticker, Kraken trade or ticker), then a
/// message's bytes. The reader must throw a `VenueParseError` or return a reading whose trades are usable as they
/// stand: a named instrument, a price greater than zero with at most 18 decimals. Reading the same bytes again
/// gives the same answer, and the JSON reader agrees on the bytes whether they come as text or as raw bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVenuesOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let adapter = venues[Int(data[0]) % venues.count]
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let text = String(decoding: bytes, as: UTF8.self)

    let first = read(adapter, text)
    guard read(adapter, text) == first else { fatalError("\(adapter.name) read the same message two ways") }
    if case .success(.trades(let trades, _)) = first {
        for trade in trades {
            guard !trade.instrument.isEmpty else { fatalError("\(adapter.name): a trade without an instrument") }
            guard trade.price > .zero, trade.price.scale <= ExactDecimal.maxScale else {
                fatalError("\(adapter.name): an unusable price \(trade.price)")
            }
        }
    }
    // The JSON reader: valid UTF-8 read from bytes and from text must agree.
    if let valid = String(validating: bytes, as: UTF8.self) {
        let fromBytes = Result { () throws(TradeJSON.SyntaxError) in try TradeJSON.parse(bytes) }
        let fromText = Result { () throws(TradeJSON.SyntaxError) in try TradeJSON.parse(valid[...]) }
        guard fromBytes == fromText else { fatalError("the JSON reader differs between bytes and text") }
    }
    return 0
}

private let venues: [any VenueAdapter] = [
    FinnhubVenue(token: "t"), BinanceVenue(), CoinbaseVenue(channel: .matches), CoinbaseVenue(channel: .ticker),
    KrakenVenue(channel: .trade), KrakenVenue(channel: .ticker),
]

private func read(_ adapter: any VenueAdapter, _ text: String) -> Result<VenueMessage, VenueParseError> {
    Result { () throws(VenueParseError) in try adapter.read(text: text) }
}
