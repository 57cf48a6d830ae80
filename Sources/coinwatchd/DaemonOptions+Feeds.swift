import CoinWatchCommandLine
import CoinWatchFeeds
import CoinWatchModel
import Foundation

/// The options of the price sources: which symbols live venues subscribe to, where the venues are, how their prices
/// are combined. Each is also a `COINWATCH_…` variable; a bad value is a usage error naming the flag.
extension DaemonOptions {
    static let feedOptions: [OptionSpec] = [
        OptionSpec("symbols", .value(placeholder: "SYMBOLS"), environment: "COINWATCH_SYMBOLS", default: "BTC,ETH",
                   help: "What live venues subscribe to, comma-separated (BTC,ETH,SOL)."),
        OptionSpec("feed-url", .value(placeholder: "NAME=URL,…"), environment: "COINWATCH_FEED_URL",
                   help: "A venue's endpoint instead of its public one (binance=ws://127.0.0.1:9001/stream)."),
        OptionSpec("ca-file", .value(placeholder: "FILE"), environment: "COINWATCH_CA_FILE",
                   help: "PEM file of CAs trusted besides the system's, for wss:// venues and APNs (a mock, a proxy)."),
        OptionSpec("finnhub-token", .value(placeholder: "TOKEN"), environment: "COINWATCH_FINNHUB_TOKEN",
                   help: "Finnhub API token (needed for --feed finnhub; never logged)."),
        OptionSpec("max-price-age", .value(placeholder: "DURATION"), environment: "COINWATCH_MAX_PRICE_AGE", default: "10s",
                   help: "A source's price counts toward the median this long; a symbol with none younger is stale."),
        OptionSpec("usd-quotes", .value(placeholder: "CODES"), environment: "COINWATCH_USD_QUOTES", default: "USD,USDT",
                   help: "Quote currencies whose venue prices count as USD prices."),
        OptionSpec("symbol-map", .value(placeholder: "ENTRIES"), environment: "COINWATCH_SYMBOL_MAP",
                   help: "Extra instrument names: ALIAS=SYMBOL (XBT=BTC) or VENUE:SYMBOL=INSTRUMENT (kraken:BTC=XBT/USD)."),
        OptionSpec("feed-max-message-bytes", .value(placeholder: "BYTES"), environment: "COINWATCH_FEED_MAX_MESSAGE_BYTES",
                   default: "1048576", help: "Largest WebSocket message taken from a venue (larger: close 1009)."),
    ]

    /// Reads the feed options, checking them against `feed`.
    static func feedConfiguration(_ parsed: ParsedArguments, feed: FeedSpec) throws(UsageError) -> FeedSet.Configuration {
        var configuration = FeedSet.Configuration()
        var symbols: [Symbol] = []
        for text in parsed["symbols"]!.split(separator: ",", omittingEmptySubsequences: false) {
            do {
                let symbol = try Symbol(validating: text.trimmingCharacters(in: .whitespaces), field: "--symbols")
                if !symbols.contains(symbol) { symbols.append(symbol) }
            } catch {
                throw UsageError("--symbols: \(error.rule)")
            }
        }
        guard symbols.count <= 256 else { throw UsageError("--symbols: at most 256 symbols") }
        configuration.symbols = symbols
        let venues = feed.sources.filter(\.isVenue).map(\.name)
        if let urls = parsed["feed-url"], !urls.isEmpty {
            for entry in urls.split(separator: ",") {
                guard let equals = entry.firstIndex(of: "=") else {
                    throw UsageError("--feed-url: '\(entry)' is not NAME=URL")
                }
                let name = entry[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                let url = entry[entry.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                guard Venues.names.contains(name) else {
                    throw UsageError("--feed-url: '\(name)' is not a venue (\(Venues.names.joined(separator: ", ")))")
                }
                guard venues.contains(name) else {
                    throw UsageError("--feed-url: \(name) is not in --feed (\(feed))")
                }
                do {
                    _ = try WebSocketURL(parsing: url)
                } catch {
                    throw UsageError("--feed-url: \(error.message)")
                }
                configuration.urls[name] = url
            }
        }
        if let file = parsed["ca-file"], !file.isEmpty {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw UsageError("--ca-file: cannot read '\(file)'")
            }
            do {
                try FeedSet.checkCAFile(file)
            } catch {
                throw UsageError("--ca-file: \(error.message)")
            }
            configuration.caFile = file
        }
        configuration.finnhubToken = parsed["finnhub-token"].flatMap { $0.isEmpty ? nil : $0 }
        if venues.contains("finnhub") && configuration.finnhubToken == nil {
            throw UsageError("--finnhub-token: --feed finnhub needs an API token (or COINWATCH_FINNHUB_TOKEN)")
        }
        let age = try parsed.value("max-price-age", as: "a duration such as 500ms, 10s or 5m", DurationText.parse)!
        guard age > .zero else { throw UsageError("--max-price-age: must be more than 0") }
        configuration.aggregation.maxAge = age
        do {
            try configuration.symbolMap.setUSDQuotes(parsing: parsed["usd-quotes"]!)
        } catch {
            throw UsageError("--usd-quotes: \(error.message)")
        }
        if let map = parsed["symbol-map"], !map.isEmpty {
            do {
                try configuration.symbolMap.add(parsing: map, venues: Venues.names)
            } catch {
                throw UsageError("--symbol-map: \(error.message)")
            }
        }
        guard let maxMessage = try parsed.value("feed-max-message-bytes", as: "a whole number ≥ 1024", { Int($0) }),
              maxMessage >= 1024
        else {
            throw UsageError("--feed-max-message-bytes: must be at least 1024")
        }
        configuration.maxMessageBytes = maxMessage
        return configuration
    }
}
