import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// The warnings SaveSettings answers with (`SaveSettingsResponse.warnings`): a save that stores a rule the server
/// can tell will not fire as things stand. Today that is a rule for a symbol the server has never priced (a typo
/// such as BTCC, or a symbol no feed carries): stored as asked, but said so, since nothing else would show it.
enum SaveWarnings {
    /// The symbols `command` gives a rule (not an all-off one, which removes the symbol) for which `isPriced` says
    /// no price was ever seen, in symbol order: one warning each (`appending`).
    static func unpriced(in command: SaveCommand, isPriced: (Symbol) -> Bool) -> [Symbol] {
        var symbols: [Symbol] = []
        // The command's symbols are validated, and each is named once.
        for (symbol, rule) in command.setRules where rule != nil && !isPriced(symbol) {
            // One allocation, and none for the usual save, whose symbols are all priced.
            if symbols.isEmpty { symbols.reserveCapacity(command.setRules.count) }
            symbols.append(symbol)
        }
        if symbols.count > 1 { symbols.sort() }
        return symbols
    }

    /// A warning is the prefix, the symbol and the suffix.
    private static let prefix = Array("no price has been seen for ".utf8)
    private static let suffix = Array(" on this server; its rule cannot fire until a feed or PublishPrices prices it".utf8)

    /// `response` (an encoded `SaveSettingsResponse`) with a warning for each of `unpriced` appended as field 2:
    /// protobuf reads concatenated encodings as one message, so the writer's pre-encoded answer is kept as it is,
    /// and the warnings are written after it into the same allocation (`ProtobufWriter`, as the RPC envelope is),
    /// each from its three parts without building the text first. Through the generated encoder each save with a
    /// warning cost more (a C message built and packed), and with the benchmark's unpriced symbols every save has one.
    static func appending(unpriced: [Symbol], to response: [UInt8]) -> [UInt8] {
        guard !unpriced.isEmpty else { return response }
        let fixed = prefix.count + suffix.count
        let added = unpriced.reduce(0) {
            $0 + ProtobufWriter.delimitedSize(field: warningsField, length: fixed + $1.rawValue.utf8.count)
        }
        return [UInt8](unsafeUninitializedCapacity: response.count + added) { buffer, initialized in
            let start = buffer.initialize(fromContentsOf: response)
            var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[start...])))
            for symbol in unpriced {
                var name = symbol.rawValue
                name.withUTF8 { name in
                    writer.writeDelimitedHeader(warningsField, length: fixed + name.count)
                    prefix.withUnsafeBytes { writer.writeBytes($0) }
                    writer.writeBytes(UnsafeRawBufferPointer(name))
                    suffix.withUnsafeBytes { writer.writeBytes($0) }
                }
            }
            precondition(writer.isFull, "SaveWarnings sized \(added) bytes and wrote fewer")
            initialized = response.count + added
        }
    }

    /// `SaveSettingsResponse.warnings`' field number (proto/coinwatch/v1/coinwatch.proto).
    static let warningsField = 2
}
