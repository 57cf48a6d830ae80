import CoinWatchModel

extension ReplayRecording {
    /// One exchange message per line: Finnhub trade batches or Binance trade events.
    static func parseJSONLines(
        _ lines: [(number: Int, text: Substring)], _ diagnostics: inout Diagnostics
    ) -> [ReplayEvent] {
        var events: [ReplayEvent] = []
        for (number, text) in lines {
            let message: TradeJSON.Value
            do {
                message = try TradeJSON.parse(text)
            } catch {
                diagnostics.skip(line: number, error.description)
                continue
            }
            trades(in: message, line: number, into: &events, &diagnostics, depth: 0)
        }
        return events
    }

    private static func trades(
        in message: TradeJSON.Value, line: Int, into events: inout [ReplayEvent], _ diagnostics: inout Diagnostics,
        depth: Int
    ) {
        guard case .object = message else {
            diagnostics.skip(line: line, "expected a JSON object")
            return
        }
        // Binance combined stream: {"stream":"btcusdt@trade","data":{...}}
        if message["stream"] != nil, let inner = message["data"], case .object = inner, depth == 0 {
            trades(in: inner, line: line, into: &events, &diagnostics, depth: 1)
            return
        }
        // Finnhub: {"type":"trade","data":[{"p":…,"s":…,"t":…,"v":…}, …]}; other types (ping) carry none.
        if let type = message["type"]?.string {
            guard type == "trade" else { return }
            guard case .array(let items)? = message["data"] else {
                diagnostics.skip(line: line, "a trade message needs a \"data\" array")
                return
            }
            for (index, item) in items.enumerated() {
                switch trade(price: item["p"], symbol: item["s"], time: item["t"], line: line) {
                case .success(let event): events.append(event)
                case .failure(let problem): diagnostics.skip(line: line, "data[\(index)]: \(problem.reason)")
                }
            }
            return
        }
        // Binance: {"e":"trade","E":…,"s":"BTCUSDT","p":"64250.50","T":…}
        if let event = message["e"]?.string {
            guard event == "trade" || event == "aggTrade" else { return }
            switch trade(price: message["p"], symbol: message["s"], time: message["T"] ?? message["E"], line: line) {
            case .success(let trade): events.append(trade)
            case .failure(let problem): diagnostics.skip(line: line, problem.reason)
            }
            return
        }
        diagnostics.skip(
            line: line, "not a trade message (expected {\"type\":\"trade\",\"data\":[…]} or {\"e\":\"trade\",…})")
    }

    private static func trade(
        price: TradeJSON.Value?, symbol: TradeJSON.Value?, time: TradeJSON.Value?, line: Int
    ) -> Result<ReplayEvent, LineProblem> {
        guard let symbolText = symbol?.string else { return .failure(LineProblem("missing \"s\" (symbol)")) }
        let parsedSymbol: Symbol
        do {
            parsedSymbol = try ExchangeSymbol.symbol(symbolText, field: "s")
        } catch {
            return .failure(LineProblem(error.description))
        }
        guard let priceText = scalarText(price) else { return .failure(LineProblem("missing \"p\" (price)")) }
        guard let timeText = scalarText(time) else { return .failure(LineProblem("missing trade time")) }
        switch (Self.timestamp(timeText), Self.price(priceText)) {
        case (.success(let timeMs), .success(let value)):
            return .success(ReplayEvent(timeMs: timeMs, symbol: parsedSymbol, price: value, line: line))
        case (.failure(let problem), _), (_, .failure(let problem)):
            return .failure(problem)
        }
    }

    /// The text of a number, or of a string holding one (Binance quotes its prices).
    private static func scalarText(_ value: TradeJSON.Value?) -> Substring? {
        switch value {
        case .number(let text)?: text
        case .string(let text)?: text[...]
        default: nil
        }
    }
}
