import CoinWatchModel

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
        for (number, text) in lines {
            let message: TradeJSON.Value
            do {
                message = try TradeJSON.parse(text)
            } catch {
                diagnostics.skip(line: number, error.description)
                continue
            }
            guard case .object(let members) = message else {
                diagnostics.skip(line: number, "expected a JSON object")
                continue
            }
            var read: VenueMessage = .unknown("")
            do {
                for venue in recordedVenues {
                    read = try venue.read(message)
                    if case .unknown = read { continue }
                    break
                }
            } catch {
                diagnostics.skip(line: number, error.message)
                continue
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
            case .unknown where !members.contains(where: { venueMessageKeys.contains($0.key) }):
                diagnostics.skip(
                    line: number, "not a trade message (expected Finnhub, Binance, Coinbase or Kraken v2 trades)")
            default:
                // Pings, heartbeats, acknowledgements and other venue messages without trades.
                break
            }
        }
        return events
    }
}
