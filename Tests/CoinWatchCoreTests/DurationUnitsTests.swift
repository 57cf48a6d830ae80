import CoinWatchCore
import Testing

@Suite("Duration units")
struct DurationUnitsTests {
    @Test("whole nanoseconds and milliseconds, truncated toward zero", arguments: [
        (Duration.zero, Int64(0), Int64(0)),
        (.nanoseconds(1), 1, 0),
        (.nanoseconds(1_999_999), 1_999_999, 1),
        (.milliseconds(1500), 1_500_000_000, 1500),
        (.seconds(10), 10_000_000_000, 10_000),
        (.nanoseconds(-1_500_000), -1_500_000, -1),
        (.seconds(-2), -2_000_000_000, -2000),
    ])
    func conversions(duration: Duration, nanoseconds: Int64, milliseconds: Int64) {
        #expect(duration.inNanoseconds == nanoseconds)
        #expect(duration.inMilliseconds == milliseconds)
    }

    @Test("durations past the Int64 range saturate instead of trapping")
    func saturation() {
        #expect(Duration.seconds(Int64.max).inNanoseconds == .max)
        #expect(Duration.seconds(Int64.min).inNanoseconds == .min)
        #expect(Duration.seconds(Int64.max).inMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).inMilliseconds == .min)
        #expect(Duration.seconds(9_223_372_036).inNanoseconds == 9_223_372_036_000_000_000)
        #expect((Duration.seconds(9_223_372_036) + .nanoseconds(999_999_999)).inNanoseconds == .max)
    }

    @Test("seconds as a floating-point number")
    func seconds() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.seconds(-3).inSeconds == -3)
    }
}
