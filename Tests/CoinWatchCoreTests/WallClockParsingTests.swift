import Testing
import CoinWatchCore

struct WallClockParsingTests {
    @Test func rfc3339TimesBecomeEpochMilliseconds() {
        let cases: [(String, Int64)] = [
            ("1970-01-01T00:00:00Z", 0), ("2024-06-10T00:00:00Z", 1_717_977_600_000),
            ("2024-06-10T00:00:01.5Z", 1_717_977_601_500), ("2024-06-10T00:00:01.123456789Z", 1_717_977_601_123),
            ("2024-06-10T02:00:00+02:00", 1_717_977_600_000), ("2024-06-09T19:00:00-05:00", 1_717_977_600_000),
            ("2000-02-29T12:00:00.001z", 951_825_600_001), ("1969-12-31T23:59:59.999Z", -1),
        ]
        for (text, expected) in cases {
            #expect(WallClock.milliseconds(rfc3339: text) == expected, "\(text)")
        }
    }

    @Test func parsingReadsBackWhatFormattingWrites() {
        for milliseconds: Int64 in [0, 1, -1, 951_782_400_000, 1_700_000_000_123, 4_102_444_800_000, -62_135_596_800_000] {
            #expect(WallClock.milliseconds(rfc3339: WallClock.iso8601(milliseconds: milliseconds)) == milliseconds)
        }
        let now = WallClock.microseconds()
        #expect(now / 1000 - WallClock.milliseconds() <= 0)
    }

    @Test func otherTextIsRefused() {
        for text in ["", "2024-06-10", "2024-06-10T00:00:00", "2024-13-01T00:00:00Z", "2024-06-10T24:00:00Z",
                     "2024-06-10T00:00:00.Z", "2024-06-10T00:00:00ZZ", "2024-06-10T00:00:00+0200", "soon",
                     "2024-06-10T00:00:00.1234567890123Z"] {
            #expect(WallClock.milliseconds(rfc3339: text) == nil, "\(text)")
        }
    }
}
