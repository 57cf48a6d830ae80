import CoinWatchCore
import Testing

@Suite struct BackoffCeilingTests {
    @Test("doubles from the base up to the cap, and stays there however many failures")
    func doublesAndCaps() {
        #expect((0..<7).map { BackoffCeiling.of(base: 250, cap: 5_000, doublings: $0) } == [250, 500, 1_000, 2_000, 4_000, 5_000, 5_000])
        #expect(BackoffCeiling.of(base: 1_000_000_000, cap: 60_000_000_000, doublings: Int.max) == 60_000_000_000)
        #expect(BackoffCeiling.of(base: 7, cap: .max, doublings: 1_000) == 7 << 40)
        #expect(BackoffCeiling.of(base: 250, cap: 5_000, doublings: -3) == 250)
    }

    @Test("a base above the cap gives the cap")
    func baseAboveCap() {
        #expect(BackoffCeiling.of(base: 9_000, cap: 5_000, doublings: 0) == 5_000)
    }
}
