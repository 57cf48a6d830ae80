import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// The warnings SaveSettings answers with (`SaveSettingsResponse.warnings`): a save that stores a rule the server
/// can tell will not fire as things stand. Today that is a rule for a symbol the server has never priced (a typo
/// such as BTCC, or a symbol no feed carries): stored as asked, but said so, since nothing else would show it.
enum SaveWarnings {
    /// One warning per symbol `command` gives a rule (not an all-off one, which removes the symbol) for which
    /// `isPriced` says no price was ever seen, in symbol order.
    static func unpriced(in command: SaveCommand, isPriced: (Symbol) -> Bool) -> [String] {
        var symbols: [Symbol] = []
        // The command's symbols are validated, and each is named once.
        for (symbol, rule) in command.setRules where rule != nil && !isPriced(symbol) {
            symbols.append(symbol)
        }
        return symbols.sorted().map {
            "no price has been seen for \($0.rawValue) on this server; its rule cannot fire until a feed or PublishPrices prices it"
        }
    }

    /// `response` (an encoded `SaveSettingsResponse`) with `warnings` appended as field 2: protobuf reads
    /// concatenated encodings as one message, so the writer's pre-encoded answer is kept as it is, and the warnings
    /// are written after it into the same allocation (`ProtobufWriter`, as the RPC envelope is). Through the
    /// generated encoder each save with a warning cost more (a C message built and packed), and with the benchmark's
    /// unpriced symbols every save has one.
    static func appending(_ warnings: [String], to response: [UInt8]) -> [UInt8] {
        guard !warnings.isEmpty else { return response }
        let added = warnings.reduce(0) { $0 + ProtobufWriter.delimitedSize(field: warningsField, length: $1.utf8.count) }
        return [UInt8](unsafeUninitializedCapacity: response.count + added) { buffer, initialized in
            let start = buffer.initialize(fromContentsOf: response)
            var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[start...])))
            for warning in warnings {
                writer.writeString(warningsField, warning)
            }
            precondition(writer.isFull, "SaveWarnings sized \(added) bytes and wrote fewer")
            initialized = response.count + added
        }
    }

    /// `SaveSettingsResponse.warnings`' field number (proto/coinwatch/v1/coinwatch.proto).
    static let warningsField = 2
}
