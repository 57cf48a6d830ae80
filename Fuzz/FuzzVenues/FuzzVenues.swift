@testable import CoinWatchFeeds
import CoinWatchModel
import CoinWatchProto

/// libFuzzer target: every venue's message reader, and the JSON reader under them.
///
/// Input: a byte choosing the venue (Finnhub, Binance, Coinbase matches or ticker, Kraken trade or ticker), then a
/// message's bytes (made UTF-8, as the WebSocket client lets only UTF-8 through). The reader must throw a
/// `VenueParseError` or return a reading whose trades are usable as they stand: a named instrument, a price greater
/// than zero with at most 18 decimals. Reading the same bytes again gives the same answer, and so does reading them
/// with a context kept from the last read and the trades' instruments subscribed to. A message is refused as JSON
/// exactly when checking it alone with the JSON reader refuses it, with the same error. Finnhub's straight-through
/// reading of its usual layout, whatever the venue byte, either declines a message or reads it as the general walk;
/// and whatever the chosen venue's `readUsualTrades` takes, its `read` gives as the same trades.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVenuesOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let adapter = venues[Int(data[0]) % venues.count]
    var text = String(decoding: UnsafeRawBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)

    let first = Result { () throws(VenueParseError) in try adapter.read(text: text) }
    guard Result(catching: { () throws(VenueParseError) in try adapter.read(text: text) }) == first else {
        fatalError("\(adapter.name) read the same message two ways")
    }
    var instruments = ["BINANCE:BTCUSDT", "BTC-USD"]
    if case .success(.trades(let trades, _)) = first {
        for trade in trades {
            guard !trade.instrument.isEmpty else { fatalError("\(adapter.name): a trade without an instrument") }
            guard trade.price > .zero, trade.price.scale <= ExactDecimal.maxScale else {
                fatalError("\(adapter.name): an unusable price \(trade.price)")
            }
            instruments.append(trade.instrument)
        }
    }
    text.withUTF8 { utf8 in
        let bytes = UnsafeRawBufferPointer(utf8)
        var usualContext = VenueReadContext(instruments: VenueInstruments(instruments))
        if let usual = FinnhubVenue.usualTrades(bytes, &usualContext) {
            var walkContext = VenueReadContext(instruments: VenueInstruments(instruments))
            let walked = Result { () throws(VenueParseError) in try FinnhubVenue().walk(bytes, &walkContext) }
            guard walked == .success(usual) else { fatalError("finnhub's usual layout read differently from the walk") }
        }
        var straightContext = VenueReadContext(instruments: VenueInstruments(instruments))
        if adapter.readUsualTrades(bytes, &straightContext), first != .success(straightContext.message) {
            fatalError("\(adapter.name)'s usual trades differ from what it reads")
        }
        var context = VenueReadContext(instruments: VenueInstruments(instruments))
        for _ in 0..<2 {
            let read = Result { () throws(VenueParseError) in try adapter.read(bytes, &context) }
            guard read == first else { fatalError("\(adapter.name) read differently with instruments subscribed") }
        }
        switch Result(catching: { () throws(JSONSyntaxError) in try TradeJSON.validate(bytes) }) {
        case .failure(let error):
            guard first == .failure(VenueParseError(error.description)) else {
                fatalError("\(adapter.name) did not refuse invalid JSON as the JSON reader does: \(error)")
            }
        case .success:
            if case .failure(let error) = first, error.message.hasPrefix("invalid JSON") {
                fatalError("\(adapter.name) refused valid JSON: \(error)")
            }
        }
    }
    return 0
}

private let venues: [any VenueAdapter] = [
    FinnhubVenue(token: "t"), BinanceVenue(), CoinbaseVenue(channel: .matches), CoinbaseVenue(channel: .ticker),
    KrakenVenue(channel: .trade), KrakenVenue(channel: .ticker),
]
