#if canImport(Glibc)
import Glibc
#endif

/// The process's wall clock: `CLOCK_REALTIME`, the date as the system believes it.
///
/// For time stamps that leave the process (settings' `updated_at_ms`, ticks' `time_ms`, alerts, log lines) and for
/// ages compared with them (outbox expiry). It may jump when the system's time is set, so intervals and deadlines
/// use `MonotonicClock` instead.
public enum WallClock {
    /// Milliseconds since the Unix epoch, rounded down.
    public static func milliseconds() -> Int64 {
        var now = timespec()
        // clock_gettime(2): fills the caller's timespec; CLOCK_REALTIME cannot fail with a valid pointer.
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) &* 1000 &+ Int64(now.tv_nsec) / 1_000_000
    }

    /// `2024-05-01T12:00:00.123Z`: RFC 3339 in UTC with milliseconds, for `milliseconds` since the Unix epoch (any
    /// `Int64`, before 1970 included).
    public static func iso8601(milliseconds: Int64) -> String {
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
