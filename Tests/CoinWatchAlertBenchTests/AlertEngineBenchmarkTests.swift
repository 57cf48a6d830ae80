import CoinWatchAlertBench
import Foundation
import Testing

@Suite("AlertEngine benchmark")
struct AlertEngineBenchmarkTests {
    /// The benchmark at small scale: it must run, and the engine must agree with the brute-force scan
    /// on every tick it compares. Timings are reported, never asserted.
    @Test("runs small and agrees with the brute-force scan")
    func small() throws {
        var options = AlertEngineBenchmark.Options()
        options.devices = 2_000
        options.ticks = 2_000
        options.bruteForceTicks = 500
        let report = try AlertEngineBenchmark.run(options)
        #expect(report.ruleSides == 8_000)
        #expect(report.bruteForceTicks == 500)
        #expect(report.bruteForceAgreeingTicks == 500)
        #expect(report.meanChangesPerTick > 0)
        #expect(report.jumpChanges.count == 2 && report.jumpChanges.allSatisfy { $0 > 0 })
    }

    /// Full scale (1,000,000 devices). Only with `COINWATCH_BENCH=1`, and meant for `-c release`:
    /// `COINWATCH_BENCH=1 swift test -c release --filter AlertEngineBenchmarkTests`.
    @Test(
        "one million devices",
        .enabled(if: ProcessInfo.processInfo.environment["COINWATCH_BENCH"] == "1", "set COINWATCH_BENCH=1")
    )
    func full() throws {
        let report = try AlertEngineBenchmark.run { print("bench: \($0)") }
        print(report)
        #expect(report.ruleSides == 4_000_000)
        #expect(report.bruteForceAgreeingTicks == report.bruteForceTicks)
    }
}
