/// Times as the CLI shows them: UTC ISO 8601 for instants, short forms for ages.
public enum TimeText {
    /// `2024-05-01T12:00:00.123Z` for milliseconds since the Unix epoch; `-` for 0 (unset).
    public static func iso8601(milliseconds: Int64) -> String {
        guard milliseconds != 0 else { return "-" }
        let (seconds, millis) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let totalSeconds = millis < 0 ? seconds - 1 : seconds
        let milli = millis < 0 ? millis + 1000 : millis
        let (daysRaw, secondsOfDayRaw) = totalSeconds.quotientAndRemainder(dividingBy: 86_400)
        let days = secondsOfDayRaw < 0 ? daysRaw - 1 : daysRaw
        let secondsOfDay = secondsOfDayRaw < 0 ? secondsOfDayRaw + 86_400 : secondsOfDayRaw
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondsOfDay / 3600, 2)):"
            + "\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2)).\(pad(milli, 3))Z"
    }

    /// `0.4s`, `12s`, `3m`, `2h`, `5d`: how long ago, in the unit that keeps it short.
    public static func age(nanoseconds: UInt64) -> String {
        let millis = nanoseconds / 1_000_000
        if millis < 10_000 { return "\(millis / 1000).\(millis / 100 % 10)s" }
        let seconds = millis / 1000
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7200 { return "\(seconds / 60)m" }
        if seconds < 172_800 { return "\(seconds / 3600)h" }
        return "\(seconds / 86_400)d"
    }

    /// Year, month and day of the proleptic Gregorian calendar for days since 1970-01-01
    /// (the era-based day-count algorithm: 400-year eras of 146097 days each).
    static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
