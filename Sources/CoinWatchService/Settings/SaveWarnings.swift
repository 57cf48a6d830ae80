import CoinWatchModel
import CoinWatchProto

/// The warnings SaveSettings answers with (`SaveSettingsResponse.warnings`): a save that stores a rule the server
/// can tell will not fire as things stand. Today that is a rule for a symbol the server has never priced (a typo
/// such as BTCC, or a symbol no feed carries): stored as asked, but said so, since nothing else would show it.
enum SaveWarnings {
    /// One warning per symbol `request` gives a rule (not an all-off one, which removes the symbol) for which
    /// `isPriced` says no price was ever seen, in symbol order. Keys that are not valid symbols are left to the
    /// save's validation.
    static func unpriced(in request: V1.SaveSettingsRequest, isPriced: (Symbol) -> Bool) -> [String] {
        var symbols: [Symbol] = []
        for (key, rule) in request.setRules where isOn(rule.below) || isOn(rule.above) {
            guard let symbol = try? Symbol(validating: key), !isPriced(symbol) else { continue }
            symbols.append(symbol)
        }
        return Set(symbols).sorted().map {
            "no price has been seen for \($0) on this server; its rule cannot fire until a feed or PublishPrices prices it"
        }
    }

    /// `response` (an encoded `SaveSettingsResponse`) with `warnings` appended as field 2: protobuf reads
    /// concatenated encodings as one message, so the writer's pre-encoded answer is kept as it is.
    static func appending(_ warnings: [String], to response: [UInt8]) -> [UInt8] {
        guard !warnings.isEmpty else { return response }
        return response + V1.SaveSettingsResponse(warnings: warnings).serializedBytes()
    }

    /// Whether a wire threshold is set (present and not zero, which is "off").
    private static func isOn(_ threshold: V1.Decimal?) -> Bool {
        guard let threshold else { return false }
        return threshold.mantissa != 0
    }
}
