import CoinWatchAlertBench

/// `alerts` mode: the crossing engine with `--devices` devices holding rules on
/// BTC and ETH, beside a brute-force scan of the same rules in the same run.
struct AlertBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        var engineOptions = AlertEngineBenchmark.Options()
        if options.devices > 0 { engineOptions.devices = options.devices }
        let report = try AlertEngineBenchmark.run(engineOptions) { print($0) }
        print(report)
        if options.json {
            print("{\"mode\":\"alerts\",\"devices\":\(report.devices),\"rule_sides\":\(report.ruleSides),"
                + "\"load_fresh_s\":\(report.freshLoadSeconds),\"load_snapshot_s\":\(report.snapshotLoadSeconds),"
                + "\"tick_p50_us\":\(report.tickP50Microseconds),\"tick_p99_us\":\(report.tickP99Microseconds),"
                + "\"ticks_per_second\":\(Int(report.ticksPerSecond)),"
                + "\"volatile_p99_us\":\(report.volatileP99Microseconds),"
                + "\"brute_force_p50_us\":\(report.bruteForceP50Microseconds),"
                + "\"brute_force_p99_us\":\(report.bruteForceP99Microseconds),"
                + "\"brute_force_ticks_per_second\":\(Int(report.bruteForceTicksPerSecond)),"
                + "\"agreeing_ticks\":\(report.bruteForceAgreeingTicks),\"checked_ticks\":\(report.bruteForceTicks)}")
        }
        return report.bruteForceAgreeingTicks == report.bruteForceTicks ? 0 : 1
    }
}
