public import CoinWatchModel
import Foundation

/// How exchange instrument names map to CoinWatch symbols, and CoinWatch symbols to the instruments a venue is
/// subscribed to.
///
/// An instrument is read by dropping a venue prefix (up to `:`, as in Finnhub's `BINANCE:BTCUSDT`), then splitting
/// base and quote at a `-`, `/` or `_` separator (`BTC-USD`, `BTC/USD`, `BTC_USDT`) or, without one, at a known
/// quote-currency suffix when at least two characters remain (`BTCUSDT`, `btcusdt`). The base goes through the
/// aliases (`XBT` → `BTC`). A live venue's price counts only when its quote is one of `usdQuotes` (USD and USDT by
/// default): `BTC/EUR` is not a BTC price in dollars. Replayed files are read leniently (any known quote), since the
/// recording chose its instruments.
public struct SymbolMap: Sendable, Hashable {
    /// Quote currencies whose prices count as USD prices.
    public var usdQuotes: Set<String>
    /// Base-asset aliases, by the venue's spelling.
    public var aliases: [String: Symbol]
    /// Instruments chosen per venue and symbol (`kraken` → `BTC` → `XBT/USD`), instead of the venue's default.
    public var instruments: [String: [Symbol: String]]

    /// Quote currencies recognised as a suffix of an instrument without a separator, longest first.
    public static let knownQuotes = ["FDUSD", "USDT", "USDC", "BUSD", "TUSD", "USD", "EUR", "GBP", "JPY"]

    public static let defaultUSDQuotes: Set<String> = ["USD", "USDT"]
    public static let defaultAliases: [String: Symbol] = ["XBT": symbol("BTC"), "XDG": symbol("DOGE")]

    public init(
        usdQuotes: Set<String> = SymbolMap.defaultUSDQuotes, aliases: [String: Symbol] = SymbolMap.defaultAliases,
        instruments: [String: [Symbol: String]] = [:]
    ) {
        self.usdQuotes = usdQuotes
        self.aliases = aliases
        self.instruments = instruments
    }

    /// Splits an instrument into its base and, when one is recognisable, its quote.
    static func split(_ text: String) -> (base: Substring, quote: Substring?) {
        var name = Substring(text)
        if let colon = name.lastIndex(of: ":") {
            name = name[name.index(after: colon)...]
        }
        if let separator = name.firstIndex(where: { $0 == "-" || $0 == "/" || $0 == "_" }) {
            return (name[..<separator], name[name.index(after: separator)...])
        }
        let upper = name.uppercased()
        for quote in knownQuotes where upper.hasSuffix(quote) && upper.count - quote.count >= 2 {
            return (name.dropLast(quote.count), name.suffix(quote.count))
        }
        return (name, nil)
    }

    private func base(_ base: Substring, of text: String, field: String) throws(ValidationError) -> Symbol {
        if let alias = aliases[base.uppercased()] { return alias }
        do {
            return try Symbol(validating: String(base), field: field)
        } catch {
            throw ValidationError(field: field, rule: "'\(text)' does not name an asset (\(error.rule))")
        }
    }

    /// The asset a recorded instrument trades, whatever its quote: `BINANCE:BTCUSDT`, `BTC/EUR`, `XBT/USD` → `BTC`.
    public func asset(_ text: String, field: String = "symbol") throws(ValidationError) -> Symbol {
        let (base, _) = Self.split(text)
        return try self.base(base, of: text, field: field)
    }

    /// The symbol a live venue's instrument is a USD price of: `BTCUSDT`, `BTC-USD`, `BTC/USD`, `XBT/USD` → `BTC`.
    ///
    /// - Throws: when the instrument has no recognisable quote, or its quote does not count as USD.
    public func usdSymbol(_ text: String, field: String = "symbol") throws(ValidationError) -> Symbol {
        let (base, quote) = Self.split(text)
        guard let quote else {
            throw ValidationError(field: field, rule: "'\(text)' names no quote currency")
        }
        guard usdQuotes.contains(quote.uppercased()) else {
            throw ValidationError(
                field: field,
                rule: "'\(text)' is quoted in \(quote.uppercased()), which does not count as USD (accepted: "
                    + "\(usdQuotes.sorted().joined(separator: ", ")))")
        }
        return try self.base(base, of: text, field: field)
    }

    /// The instrument `venue` is subscribed to for `symbol`: a configured one, or the venue's default spelling.
    public func instrument(venue: String, symbol: Symbol, default make: (String) -> String) -> String {
        if let chosen = instruments[venue]?[symbol] { return chosen }
        // A symbol whose alias the venue uses (Kraken v1 spelt BTC as XBT) is subscribed by its own name; aliases
        // only map what comes back.
        return make(symbol.rawValue)
    }

    private static func symbol(_ text: String) -> Symbol {
        // The literals above are valid; a typo fails every test that builds a map.
        try! Symbol(validating: text)
    }
}

extension SymbolMap {
    /// Parses `--usd-quotes` (`USD,USDT,USDC`).
    public mutating func setUSDQuotes(parsing text: String) throws(FeedError) {
        var quotes = Set<String>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let quote = item.trimmingCharacters(in: .whitespaces).uppercased()
            guard (2...6).contains(quote.count), quote.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw FeedError(code: .invalidSpec, message: "'\(item)' is not a currency code (2–6 letters or digits)")
            }
            quotes.insert(quote)
        }
        usdQuotes = quotes
    }

    /// Parses `--symbol-map` entries, comma-separated: `ALIAS=SYMBOL` (a venue's name for an asset, `XBT=BTC`) or
    /// `VENUE:SYMBOL=INSTRUMENT` (what to subscribe to, `kraken:BTC=XBT/USD`).
    public mutating func add(parsing text: String, venues: [String]) throws(FeedError) {
        for item in text.split(separator: ",") {
            let entry = item.trimmingCharacters(in: .whitespaces)
            guard let equals = entry.firstIndex(of: "=") else {
                throw FeedError(code: .invalidSpec, message: "'\(entry)' is not ALIAS=SYMBOL or VENUE:SYMBOL=INSTRUMENT")
            }
            let left = entry[..<equals]
            let right = String(entry[entry.index(after: equals)...])
            do {
                if let colon = left.firstIndex(of: ":") {
                    let venue = left[..<colon].lowercased()
                    guard venues.contains(venue) else {
                        throw FeedError(
                            code: .invalidSpec,
                            message: "'\(entry)': unknown venue '\(venue)' (one of \(venues.joined(separator: ", ")))")
                    }
                    let symbol = try Symbol(validating: String(left[left.index(after: colon)...]))
                    guard !right.isEmpty, right.count <= 64, right.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                        throw FeedError(code: .invalidSpec, message: "'\(entry)': the instrument must be 1–64 visible ASCII characters")
                    }
                    instruments[venue, default: [:]][symbol] = right
                } else {
                    let alias = left.uppercased()
                    guard !alias.isEmpty, alias.count <= 16, alias.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
                    else {
                        throw FeedError(code: .invalidSpec, message: "'\(entry)': the alias must be letters and digits")
                    }
                    aliases[alias] = try Symbol(validating: right)
                }
            } catch let error as FeedError {
                throw error
            } catch {
                throw FeedError(code: .invalidSpec, message: "'\(entry)': \(error)")
            }
        }
    }
}
