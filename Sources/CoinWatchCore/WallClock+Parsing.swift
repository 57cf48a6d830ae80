#if canImport(Glibc)
import Glibc
#endif

extension WallClock {
    /// Microseconds since the Unix epoch, rounded down: for latency measured between processes on one machine
    /// (a benchmark's peer stamps its messages with the same clock).
    public static func microseconds() -> Int64 {
        var now = timespec()
        // clock_gettime(2): fills the caller's timespec; CLOCK_REALTIME cannot fail with a valid pointer.
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) &* 1_000_000 &+ Int64(now.tv_nsec) / 1000
    }

    /// Milliseconds since the Unix epoch of an RFC 3339 time as exchanges write it (`2024-06-10T12:34:56.789012Z`,
    /// `…+02:00`), or nil for any other text: the inverse of `iso8601(milliseconds:)`, read exactly and without a
    /// calendar library (whose locale and time zone settings a server must not depend on). Fractions beyond
    /// milliseconds are cut, not rounded, so a time never moves into the future.
    public static func milliseconds(rfc3339 text: String) -> Int64? {
        var text = text
        return text.withUTF8 { milliseconds(rfc3339UTF8: UnsafeRawBufferPointer($0)) }
    }

    /// `milliseconds(rfc3339:)` of a time's UTF-8 bytes, for readers that hold a message's bytes rather than a
    /// `String` (a venue's trade time is read without copying it out).
    public static func milliseconds(rfc3339UTF8 bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            return value
        }
        func expect(_ characters: StaticString) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            let found = characters.withUTF8Buffer { $0.contains(byte) }
            guard found else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var millis = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if digits < 3 { millis = millis * 10 + Int(bytes[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0, digits <= 12 else { return nil }
            if digits < 3 {
                for _ in digits..<3 { millis *= 10 }
            }
        }
        var offsetMinutes = 0
        guard index < bytes.count else { return nil }
        if expect("Zz") {
            // UTC
        } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date: the inverse of `civilDate(daysSinceEpoch:)` (400-year
    /// eras of 146097 days).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
