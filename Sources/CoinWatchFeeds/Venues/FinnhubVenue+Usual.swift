import CoinWatchModel
import CoinWatchProto

extension FinnhubVenue {
    /// The trades of a message in the layout Finnhub sends every trade batch in, read straight through; nil for any
    /// other message, which `read` then reads with the general walk.
    ///
    /// The usual layout is `{"type":"trade","data":[…]}` or `{"data":[…],"type":"trade"}` exactly as Finnhub writes
    /// it (no whitespace between tokens, the message ending at its closing brace), with each item an object whose
    /// price is a plain positive number, whose symbol a string without escapes and whose time, when it has one,
    /// whole milliseconds. Every other member of an item is skipped and checked as the general walk would, at the
    /// depth it stands at there. Anything else (a repeated key, a quoted price, an item the general walk would skip
    /// with a reason, a syntax error) ends this reading and leaves the message to the general one: this reading
    /// gives either the same trades the general walk would, or nothing (`FinnhubVenueUsualTests` compare the two over
    /// mutated messages). It costs a trade message no `Token`, no closure and no `Result`.
    static func usualTrades(_ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext) -> VenueMessage? {
        readUsualTrades(message, &context) ? context.message : nil
    }

    /// `usualTrades` without the message: true with the trades in `context`'s list, false for any other message.
    static func readUsualTrades(_ message: UnsafeRawBufferPointer, _ context: inout VenueReadContext) -> Bool {
        // Inside an item's object, as the general walk is there: the message's object, `data`, the item.
        var reader = JSONReader(message, options: TradeJSON.options, depth: 3)
        let typeFirst: Bool
        if reader.consume(#"{"type":"trade","data":["#) {
            typeFirst = true
        } else if reader.consume(#"{"data":["#) {
            typeFirst = false
        } else {
            return false
        }
        context.startTrades()
        repeat {
            guard let trade = usualTrade(&reader, context.instruments) else { return false }
            context.append(trade)
        } while reader.consume(",")
        guard reader.consume("]"), reader.consume(typeFirst ? "}" : #","type":"trade"}"#),
              reader.index == message.count
        else { return false }
        return true
    }

    /// One item of the usual layout: `{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467}`.
    @inline(__always)
    private static func usualTrade(_ reader: inout JSONReader, _ instruments: VenueInstruments) -> VenueTrade? {
        var ordered = reader
        if let trade = orderedTrade(&ordered, instruments) {
            reader = ordered
            return trade
        }
        return anyOrderTrade(&reader, instruments)
    }

    /// An item whose members are the four Finnhub writes, in the order it writes them, each a value `anyOrderTrade`
    /// takes as it is: its members are then matched as they come, with no key read as a string. nil (the caller's
    /// reader untouched) for anything else.
    @inline(__always)
    private static func orderedTrade(_ reader: inout JSONReader, _ instruments: VenueInstruments) -> VenueTrade? {
        guard reader.consume(#"{"p":"#), let (digits, fraction) = reader.plainDigits(), digits > 0,
              let price = ExactDecimal(mantissa: Int64(digits), scale: fraction),
              reader.consume(#","s":"#), reader.current == UInt8(ascii: "\""), let text = try? reader.string(),
              !text.escaped, !text.isEmpty,
              reader.consume(#","t":"#), let (time, timeFraction) = reader.plainDigits(), timeFraction == 0,
              reader.consume(#","v":"#), reader.plainDigits() != nil, reader.consume("}")
        else { return nil }
        return VenueTrade(instrument: instruments.name(text.bytes), price: price, timeMs: Int64(time))
    }

    /// An item of the usual layout with its members in any order, or others beside them.
    @inline(__always)
    private static func anyOrderTrade(_ reader: inout JSONReader, _ instruments: VenueInstruments) -> VenueTrade? {
        guard reader.consume("{") else { return nil }
        var price: ExactDecimal?
        var instrument: String?
        var time: Int64?
        repeat {
            guard reader.current == UInt8(ascii: "\""), let key = try? reader.string(), reader.consume(":") else {
                return nil
            }
            switch key {
            case "p":
                guard price == nil, let (digits, fraction) = reader.plainDigits(), digits > 0,
                      let value = ExactDecimal(mantissa: Int64(digits), scale: fraction)
                else { return nil }
                price = value
            case "s":
                guard instrument == nil, reader.current == UInt8(ascii: "\""), let text = try? reader.string(),
                      !text.escaped, !text.isEmpty
                else { return nil }
                instrument = instruments.name(text.bytes)
            case "t":
                guard time == nil, let (digits, fraction) = reader.plainDigits(), fraction == 0 else { return nil }
                time = Int64(digits)
            default:
                // Skipped by the general walk too, and checked the same way (a volume is a plain number).
                guard reader.plainDigits() != nil || (try? reader.skip()) != nil else { return nil }
            }
        } while reader.consume(",")
        guard reader.consume("}"), let price, let instrument else { return nil }
        return VenueTrade(instrument: instrument, price: price, timeMs: time)
    }
}
