import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// A validated `StreamPricesRequest`.
struct StreamPricesSubscription: Sendable {
    /// Sorted and without duplicates; empty = every symbol, including ones first seen later.
    let symbols: [Symbol]
    /// 0 = every change as it comes.
    let minIntervalMs: UInt32
    let onlyChanges: Bool

    var isWildcard: Bool { symbols.isEmpty }

    init(symbols: [Symbol], minIntervalMs: UInt32 = 0, onlyChanges: Bool = false) {
        self.symbols = Array(Set(symbols)).sorted()
        self.minIntervalMs = minIntervalMs
        self.onlyChanges = onlyChanges
    }

    init(validating request: V1.StreamPricesRequest, configuration: PriceHub.Configuration) throws(RPCError) {
        let symbols = try Self.symbols(request.symbols, configuration: configuration)
        guard request.minIntervalMs <= configuration.maxIntervalMs else {
            throw RPCError(
                code: .invalidArgument,
                message: "min_interval_ms: must be at most \(configuration.maxIntervalMs) "
                    + "(got \(request.minIntervalMs))")
        }
        self.init(symbols: symbols, minIntervalMs: request.minIntervalMs, onlyChanges: request.onlyChanges)
    }

    /// Validates a request's `symbols` field (shared with GetPrices).
    static func symbols(_ texts: [String], configuration: PriceHub.Configuration) throws(RPCError) -> [Symbol] {
        guard texts.count <= configuration.maxSymbolsPerRequest else {
            throw RPCError(
                code: .invalidArgument,
                message: "symbols: at most \(configuration.maxSymbolsPerRequest) symbols per request "
                    + "(got \(texts.count))")
        }
        var symbols: [Symbol] = []
        symbols.reserveCapacity(texts.count)
        for (index, text) in texts.enumerated() {
            do {
                symbols.append(try Symbol(validating: text, field: "symbols[\(index)]"))
            } catch {
                throw RPCError(code: .invalidArgument, message: error.description)
            }
        }
        return symbols
    }
}
