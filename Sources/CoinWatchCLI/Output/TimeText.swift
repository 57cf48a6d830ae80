import CoinWatchCore

/// Times as the CLI shows them: UTC ISO 8601 for instants, short forms for ages.
enum TimeText {
    /// `2024-05-01T12:00:00.123Z` for milliseconds since the Unix epoch; `-` for 0 (unset).
    static func iso8601(milliseconds: Int64) -> String {
        milliseconds == 0 ? "-" : WallClock.iso8601(milliseconds: milliseconds)
    }

    /// `0.4s`, `12s`, `3m`, `2h`, `5d`: how long ago, in the unit that keeps it short.
    static func age(nanoseconds: UInt64) -> String {
        let millis = nanoseconds / 1_000_000
        if millis < 10_000 { return "\(millis / 1000).\(millis / 100 % 10)s" }
        let seconds = millis / 1000
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7200 { return "\(seconds / 60)m" }
        if seconds < 172_800 { return "\(seconds / 3600)h" }
        return "\(seconds / 86_400)d"
    }
}
