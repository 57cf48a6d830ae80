import CoinWatchAlertEngine
import CoinWatchCore
import CoinWatchModel

/// Measures the engine at production scale: bulk-load time, per-tick latency and throughput, beside a
/// brute-force scan of the same rules in the same run. Reports numbers; asserts nothing about time.
///
/// Rules: every device has a BTC and an ETH rule with both sides, thresholds uniform within ±5 % of
/// the starting price (cent precision), so about half the sides start armed and the rules are dense
/// where the price moves. Ticks alternate BTC and ETH as a random walk: first a calm one (steps of up
/// to 5 cents, so few thresholds are crossed), then a volatile one (steps of up to $5 on BTC and
/// 50 cents on ETH, crossing dozens to hundreds per tick).
public enum AlertEngineBenchmark {
    public struct Options: Sendable {
        public var devices = 1_000_000
        /// Ticks measured on the engine.
        public var ticks = 100_000
        /// Ticks of the volatile walk that follows.
        public var volatileTicks = 20_000
        /// Ticks also run through the brute-force scan (the first ones of the same sequence).
        public var bruteForceTicks = 200
        public var seed: UInt64 = 0xC01D_CAFE

        public init() {}
    }

    public struct Report: Sendable, CustomStringConvertible {
        public var devices = 0
        public var ruleSides = 0
        /// `load` from rules and last prices only (every side computed fresh).
        public var freshLoadSeconds = 0.0
        /// `load` from a full snapshot (rules, every side's state, prices): a restart.
        public var snapshotLoadSeconds = 0.0
        public var ticks = 0
        public var tickP50Microseconds = 0.0
        public var tickP99Microseconds = 0.0
        public var tickMaxMicroseconds = 0.0
        public var ticksPerSecond = 0.0
        /// Fired plus re-armed sides per tick, on average.
        public var meanChangesPerTick = 0.0
        public var volatileTicks = 0
        public var volatileP50Microseconds = 0.0
        public var volatileP99Microseconds = 0.0
        public var volatileMaxMicroseconds = 0.0
        public var volatileTicksPerSecond = 0.0
        public var volatileMeanChangesPerTick = 0.0
        public var bruteForceTicks = 0
        public var bruteForceP50Microseconds = 0.0
        public var bruteForceP99Microseconds = 0.0
        public var bruteForceTicksPerSecond = 0.0
        /// Ticks on which engine and scan fired and re-armed the same number of sides.
        public var bruteForceAgreeingTicks = 0
        /// A 1 % jump of BTC and the jump back: sides changed and time taken by each.
        public var jumpChanges: [Int] = []
        public var jumpMilliseconds: [Double] = []

        public var description: String {
            // Fixed-point formatting by integer conversion (no libm, no Foundation).
            func f(_ value: Double, _ digits: Int = 1) -> String {
                var scale = 1
                for _ in 0..<digits { scale *= 10 }
                let scaled = Int(value * Double(scale) + 0.5)
                guard digits > 0 else { return "\(scaled)" }
                let fraction = String(scaled % scale)
                return "\(scaled / scale)." + String(repeating: "0", count: digits - fraction.count) + fraction
            }
            return """
                devices \(devices), rule sides \(ruleSides)
                load (fresh states)     \(f(freshLoadSeconds, 3)) s
                load (snapshot)         \(f(snapshotLoadSeconds, 3)) s
                engine, calm     \(ticks) ticks: p50 \(f(tickP50Microseconds)) µs, p99 \(f(tickP99Microseconds)) µs, \
                max \(f(tickMaxMicroseconds)) µs, \(f(ticksPerSecond, 0)) ticks/s, \
                \(f(meanChangesPerTick, 2)) fired+re-armed per tick
                engine, volatile \(volatileTicks) ticks: p50 \(f(volatileP50Microseconds)) µs, \
                p99 \(f(volatileP99Microseconds)) µs, max \(f(volatileMaxMicroseconds)) µs, \
                \(f(volatileTicksPerSecond, 0)) ticks/s, \(f(volatileMeanChangesPerTick, 2)) fired+re-armed per tick
                brute force \(bruteForceTicks) ticks: p50 \(f(bruteForceP50Microseconds)) µs, \
                p99 \(f(bruteForceP99Microseconds)) µs, \(f(bruteForceTicksPerSecond, 0)) ticks/s; \
                agreeing ticks \(bruteForceAgreeingTicks)/\(bruteForceTicks)
                1 % jump and back: changes \(jumpChanges), \(jumpMilliseconds.map { f($0, 2) }) ms
                """
        }
    }

    /// Runs the benchmark, reporting progress through `log`.
    public static func run(_ options: Options = Options(), log: (String) -> Void = { _ in }) throws -> Report {
        var random = SplitMix64(seed: options.seed)
        var report = Report()
        report.devices = options.devices
        let btc = try Symbol(validating: "BTC")
        let eth = try Symbol(validating: "ETH")
        let startCents: [Symbol: Int64] = [btc: 6_425_050, eth: 340_025]

        log("generating \(options.devices) devices")
        var rules: [RuleRecord] = []
        rules.reserveCapacity(options.devices * 2)
        for _ in 0..<options.devices {
            let device = try DeviceID(validating: uuidText(&random))
            for symbol in [btc, eth] {
                let cents = startCents[symbol] ?? 0
                let spread = cents / 20
                let a = cents + Int64.random(in: -spread...spread, using: &random)
                var b = cents + Int64.random(in: -spread...spread, using: &random)
                if b == a { b += 1 }
                let rule = AlertRule(below: centsDecimal(min(a, b)), above: centsDecimal(max(a, b)))
                rules.append(RuleRecord(device: device, symbol: symbol, rule: rule))
            }
        }
        let lastPrices = [btc: centsDecimal(startCents[btc] ?? 0), eth: centsDecimal(startCents[eth] ?? 0)]

        let engine = AlertEngine()
        log("loading from rules")
        var start = MonotonicClock.nanoseconds()
        try engine.load(rules: rules, armStates: [], lastPrices: lastPrices, clock: 0)
        report.freshLoadSeconds = seconds(since: start)
        report.ruleSides = engine.activeSideCount

        log("loading from a snapshot")
        let snapshot = engine.snapshot()
        start = MonotonicClock.nanoseconds()
        try engine.load(snapshot)
        report.snapshotLoadSeconds = seconds(since: start)

        var scanner = BruteForceScanner(copying: engine)
        var cents = startCents
        var result = EvaluationResult()
        var engineTimes: [Double] = []
        var scanTimes: [Double] = []
        engineTimes.reserveCapacity(options.ticks)
        var changes = 0
        log("ticking")
        let loopStart = MonotonicClock.nanoseconds()
        var engineTotal = 0.0
        for tick in 0..<options.ticks {
            let symbol = tick % 2 == 0 ? btc : eth
            cents[symbol, default: 0] += Int64.random(in: -5...5, using: &random)
            let price = centsDecimal(cents[symbol] ?? 0)
            let tickStart = MonotonicClock.nanoseconds()
            try engine.evaluate(symbol: symbol, price: price, into: &result)
            let elapsed = seconds(since: tickStart)
            engineTotal += elapsed
            engineTimes.append(elapsed)
            let fired = result.alerts.count
            let reArmed = result.armStateChanges.count - fired
            changes += result.armStateChanges.count
            if tick < options.bruteForceTicks {
                let scanStart = MonotonicClock.nanoseconds()
                let scanned = scanner.tick(symbol: symbol, price: price, clock: engine.clock)
                scanTimes.append(seconds(since: scanStart))
                if scanned.fired == fired, scanned.reArmed == reArmed { report.bruteForceAgreeingTicks += 1 }
            }
        }
        log("ticked in \(seconds(since: loopStart)) s")
        report.ticks = options.ticks
        report.tickP50Microseconds = percentile(engineTimes, 0.50) * 1e6
        report.tickP99Microseconds = percentile(engineTimes, 0.99) * 1e6
        report.tickMaxMicroseconds = (engineTimes.max() ?? 0) * 1e6
        report.ticksPerSecond = engineTotal > 0 ? Double(options.ticks) / engineTotal : 0
        report.meanChangesPerTick = options.ticks > 0 ? Double(changes) / Double(options.ticks) : 0
        report.bruteForceTicks = scanTimes.count
        report.bruteForceP50Microseconds = percentile(scanTimes, 0.50) * 1e6
        report.bruteForceP99Microseconds = percentile(scanTimes, 0.99) * 1e6
        let scanTotal = scanTimes.reduce(0, +)
        report.bruteForceTicksPerSecond = scanTotal > 0 ? Double(scanTimes.count) / scanTotal : 0

        var volatileTimes: [Double] = []
        volatileTimes.reserveCapacity(options.volatileTicks)
        var volatileChanges = 0
        let steps: [Symbol: Int64] = [btc: 500, eth: 50]
        for tick in 0..<options.volatileTicks {
            let symbol = tick % 2 == 0 ? btc : eth
            let step = steps[symbol] ?? 0
            cents[symbol, default: 0] += Int64.random(in: -step...step, using: &random)
            let tickStart = MonotonicClock.nanoseconds()
            try engine.evaluate(symbol: symbol, price: centsDecimal(cents[symbol] ?? 0), into: &result)
            volatileTimes.append(seconds(since: tickStart))
            volatileChanges += result.armStateChanges.count
        }
        let volatileTotal = volatileTimes.reduce(0, +)
        report.volatileTicks = options.volatileTicks
        report.volatileP50Microseconds = percentile(volatileTimes, 0.50) * 1e6
        report.volatileP99Microseconds = percentile(volatileTimes, 0.99) * 1e6
        report.volatileMaxMicroseconds = (volatileTimes.max() ?? 0) * 1e6
        report.volatileTicksPerSecond = volatileTotal > 0 ? Double(options.volatileTicks) / volatileTotal : 0
        report.volatileMeanChangesPerTick =
            options.volatileTicks > 0 ? Double(volatileChanges) / Double(options.volatileTicks) : 0

        let base = cents[btc] ?? 0
        for target in [base + base / 100, base] {
            let jumpStart = MonotonicClock.nanoseconds()
            try engine.evaluate(symbol: btc, price: centsDecimal(target), into: &result)
            report.jumpMilliseconds.append(seconds(since: jumpStart) * 1e3)
            report.jumpChanges.append(result.armStateChanges.count)
        }
        return report
    }

    static func centsDecimal(_ cents: Int64) -> ExactDecimal {
        ExactDecimal(mantissa: cents, scale: 2) ?? .zero
    }

    /// Seconds since the monotonic time `start`.
    static func seconds(since start: Int64) -> Double {
        Double(MonotonicClock.nanoseconds() - start) / 1e9
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int(Double(sorted.count) * fraction))
        return sorted[index]
    }

    /// A random lowercase UUID text, the shape real device ids have.
    static func uuidText(_ random: inout SplitMix64) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        var bits = random.next()
        var remaining = 16
        for position in 0..<36 {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                bytes.append(UInt8(ascii: "-"))
                continue
            }
            if remaining == 0 {
                bits = random.next()
                remaining = 16
            }
            bytes.append(hex[Int(bits & 0xF)])
            bits >>= 4
            remaining -= 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
