import CoinWatchModel
import CoinWatchProto

extension ReplayRecording {
    /// The formats a JSON-lines recording may mix, tried in this order; each adapter claims only its own shape.
    static let recordedVenues: [any VenueAdapter] = [
        FinnhubVenue(), BinanceVenue(), CoinbaseVenue(channel: .matches), KrakenVenue(channel: .trade),
    ]

    /// Keys by which a message that carries no trade is recognised as a venue's (a ping, an acknowledgement, a
    /// heartbeat) and passed over without a warning.
    private static let venueMessageKeys: Set<String> = ["type", "e", "channel", "method", "event", "id"]

    /// One exchange message per line, in any of the venues' formats (see `ReplayRecording`).
    static func parseJSONLines(
        _ lines: [(number: Int, text: Substring)], _ diagnostics: inout Diagnostics
    ) -> [ReplayEvent] {
        var events: [ReplayEvent] = []
        let symbols = SymbolMap()
        var context = VenueReadContext()
        for (number, text) in lines {
            var text = text
            text.withUTF8 { utf8 in
                readLine(UnsafeRawBufferPointer(utf8), number, &context, symbols, &events, &diagnostics)
            }
        }
        return events
    }

    private static func readLine(
        _ bytes: UnsafeRawBufferPointer, _ number: Int, _ context: inout VenueReadContext, _ symbols: SymbolMap,
        _ events: inout [ReplayEvent], _ diagnostics: inout Diagnostics
    ) {
        // The first venue refuses a line that is not JSON, or not an object, for all of them.
        var read: VenueMessage = .unknown("")
        do {
            for venue in recordedVenues {
                read = try venue.read(bytes, &context)
                if case .unknown = read { continue }
                break
            }
        } catch {
            diagnostics.skip(line: number, error.message)
            return
        }
        switch read {
        case .trades(let trades, let skipped):
            for problem in skipped {
                diagnostics.skip(line: number, problem)
            }
            for trade in trades {
                guard let timeMs = trade.timeMs else {
                    diagnostics.skip(line: number, "missing trade time")
                    continue
                }
                do {
                    let symbol = try symbols.asset(trade.instrument)
                    events.append(ReplayEvent(timeMs: timeMs, symbol: symbol, price: trade.price, line: number))
                } catch {
                    diagnostics.skip(line: number, error.description)
                }
            }
        case .unknown where !hasVenueKey(bytes):
            diagnostics.skip(
                line: number, "not a trade message (expected Finnhub, Binance, Coinbase or Kraken v2 trades)")
        default:
            // Pings, heartbeats, acknowledgements and other venue messages without trades.
            break
        }
    }

    /// Whether a line (an object, read already) has one of `venueMessageKeys`.
    private static func hasVenueKey(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var found = false
        _ = try? TradeJSON.read(bytes) { (reader) throws(JSONSyntaxError) in
            try reader.object { (reader, key) throws(JSONSyntaxError) in
                if venueMessageKeys.contains(key.string) { found = true }
                try reader.skip()
            }
        }
        return found
    }
}
