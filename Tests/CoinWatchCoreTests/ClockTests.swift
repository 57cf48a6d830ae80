import CoinWatchCore
import Testing

@Suite("Clocks")
struct ClockTests {
    @Test("the monotonic clock never goes back")
    func monotonic() {
        var previous = MonotonicClock.nanoseconds()
        for _ in 0..<10_000 {
            let now = MonotonicClock.nanoseconds()
            #expect(now >= previous)
            previous = now
        }
    }

    @Test("wall-clock milliseconds read back as an RFC 3339 time of the same millisecond")
    func wallClockFormat() {
        let now = WallClock.milliseconds()
        let text = WallClock.iso8601(milliseconds: now)
        #expect(text.count == 24 && text.hasSuffix("Z"))
        #expect(text.hasSuffix(String(1000 + now % 1000).dropFirst() + "Z"))
    }

    @Test("RFC 3339 in UTC, including before 1970 and leap days", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1), "1970-01-01T00:00:00.001Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
        (Int64(1_700_000_000_123), "2023-11-14T22:13:20.123Z"),
        (Int64(4_102_444_800_000), "2100-01-01T00:00:00.000Z"),
    ])
    func iso8601(milliseconds: Int64, expected: String) {
        #expect(WallClock.iso8601(milliseconds: milliseconds) == expected)
    }
}
