import CoinWatchModel

/// A one-line chart of recent prices in block characters (▁▂▃▄▅▆▇█).
///
/// Levels are computed exactly on the decimals (scaled to a common integer), so two prices that differ
/// in the eighth decimal still draw at different heights when they are the extremes of the window.
enum Sparkline {
    static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The last `width` prices as a sparkline, lowest price at ▁ and highest at █; a flat series
    /// draws at mid height (▄). Shorter histories give a shorter line.
    static func render(_ prices: [ExactDecimal], width: Int) -> String {
        guard width > 0, !prices.isEmpty else { return "" }
        let window = prices.suffix(width)
        let scale = window.map(\.scale).max() ?? 0
        let values = window.map { Int128($0.mantissa) * power(scale - $0.scale) }
        let low = values.min()!
        let high = values.max()!
        guard high > low else { return String(repeating: levels[3], count: values.count) }
        let span = high - low
        let top = Int128(levels.count - 1)
        return String(values.map { value -> Character in
            // Nearest level: (value − low) × 7 / span, rounded half up; values < 2^127 / 8 never overflow
            // here because |mantissa| × 10^18 < 9.3 × 10^36 and × 7 stays below 6.6 × 10^37.
            let scaled = (value - low) * top * 2 + span
            return levels[Int(scaled / (span * 2))]
        })
    }

    private static func power(_ exponent: Int) -> Int128 {
        var result: Int128 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }
}
