import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto

/// Wire decimals as the CLI shows them: exact text, never through a float. (The feeds' `TradeNumber` parses
/// the number text of recorded trades; the two share nothing but the subject.)
enum DecimalDisplay {
    /// The exact value, or nil when absent; a value with an impossible scale reads as `invalid(m,s)`
    /// rather than being silently reinterpreted.
    static func text(_ wire: V1.Decimal?) -> String? {
        guard let wire else { return nil }
        guard let value = ExactDecimal(wire) else { return "invalid(\(wire.mantissa),\(wire.scale))" }
        return value.description
    }

    /// A rule threshold: absent or zero means off, shown as nil.
    static func threshold(_ wire: V1.Decimal?) -> ExactDecimal? {
        guard let wire, let value = ExactDecimal(wire), !value.isZero else { return nil }
        return value
    }

    /// JSON for a wire decimal: a string, or `null` when absent.
    static func json(_ wire: V1.Decimal?) -> String {
        text(wire).map { JSONText.quote($0) } ?? "null"
    }
}
