import CoinWatchCore

/// Durations as people type them: `500ms`, `10s`, `2m`, `1h`, or plain seconds (`1.5`).
public enum DurationText {
    public static func parse(_ text: String) -> Duration? {
        let units: [(suffix: String, nanos: Double)] = [
            ("ms", 1e6), ("us", 1e3), ("ns", 1), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
        ]
        var number = Substring(text)
        var scale = 1e9
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            scale = unit.nanos
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number),
              value.isFinite, value >= 0, value * scale < 9e18 else {
            return nil
        }
        return .nanoseconds(Int64((value * scale).rounded()))
    }

    /// `1.5s`, `250ms`, `2m`: the shortest exact form for help and logs.
    public static func format(_ duration: Duration) -> String {
        let millis = duration.inMilliseconds
        if millis % 60_000 == 0 && millis >= 60_000 { return "\(millis / 60_000)m" }
        if millis % 1000 == 0 { return "\(millis / 1000)s" }
        return "\(millis)ms"
    }
}
