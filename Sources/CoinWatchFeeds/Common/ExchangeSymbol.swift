import CoinWatchModel

/// Maps an exchange's instrument name to a CoinWatch symbol: `BINANCE:BTCUSDT`, `BTCUSDT`, `btcusdt`, `BTC-USD`
/// and `BTC/EUR` all become `BTC`.
///
/// Drops an exchange prefix (up to `:`), then either the quote after a `-`, `/` or `_` separator, or a quote
/// currency suffix (USDT, USDC, BUSD, USD, EUR) when at least two characters remain.
enum ExchangeSymbol {
    static let quoteSuffixes = ["USDT", "USDC", "BUSD", "USD", "EUR"]

    static func symbol(_ text: String, field: String = "symbol") throws(ValidationError) -> Symbol {
        var name = Substring(text)
        if let colon = name.lastIndex(of: ":") {
            name = name[name.index(after: colon)...]
        }
        if let separator = name.firstIndex(where: { $0 == "-" || $0 == "/" || $0 == "_" }) {
            name = name[..<separator]
        } else {
            let upper = name.uppercased()
            for quote in quoteSuffixes where upper.hasSuffix(quote) && upper.count - quote.count >= 2 {
                name = name.dropLast(quote.count)
                break
            }
        }
        do {
            return try Symbol(validating: String(name), field: field)
        } catch {
            throw ValidationError(field: field, rule: "'\(text)' does not name an asset (\(error.rule))")
        }
    }
}
