import CoinWatchModel
import CoinWatchProto

/// One symbol's rule in a device's stored settings, with its thresholds as exact decimals (`nil` for a side that is
/// off or that does not convert).
///
/// What the settings store hands to a component that needs every device's rules without their settings: the alert
/// service's start-up reads them through `SettingsStore`'s load hook (`onLoadedRule`) or `forEachRule(_:)`, so the
/// store never names what that component makes of them.
struct StoredRule: Hashable, Sendable {
    var symbol: Symbol
    var below: ExactDecimal?
    var above: ExactDecimal?

    /// The rules of `settings` by symbol; a symbol that does not validate (never stored by the settings store) is
    /// skipped, and of two spellings of one symbol (never stored either) one is kept.
    static func rules(of settings: V1.Settings) -> [Symbol: StoredRule] {
        var rules: [Symbol: StoredRule] = [:]
        for (text, rule) in settings.rules {
            guard let symbol = try? Symbol(validating: text) else { continue }
            rules[symbol] = StoredRule(
                symbol: symbol, below: rule.below.flatMap(ExactDecimal.init), above: rule.above.flatMap(ExactDecimal.init)
            )
        }
        return rules
    }

    /// A rule as `SettingsRecord.scan` reads it in place; `nil` when the symbol bytes do not spell a symbol.
    init?(
        symbol bytes: UnsafeRawBufferPointer,
        below: SettingsRecord.StoredDecimal?,
        above: SettingsRecord.StoredDecimal?,
        symbols: inout SymbolCache
    ) {
        guard let symbol = symbols.symbol(bytes) else { return nil }
        self.init(
            symbol: symbol,
            below: below.flatMap { ExactDecimal(mantissa: $0.mantissa, scale: $0.scale) },
            above: above.flatMap { ExactDecimal(mantissa: $0.mantissa, scale: $0.scale) }
        )
    }

    init(symbol: Symbol, below: ExactDecimal?, above: ExactDecimal?) {
        self.symbol = symbol
        self.below = below
        self.above = above
    }
}
