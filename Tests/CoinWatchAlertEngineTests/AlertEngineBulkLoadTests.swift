@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

/// The bulk load across several symbols (each book built on its own thread) and the per-device export a store
/// keeping one record per device persists.
@Suite("AlertEngine bulk load")
struct AlertEngineBulkLoadTests {
    /// An engine with `count` devices holding rules on three symbols, after a few ticks.
    private func populated(_ count: Int) throws -> AlertEngine {
        let engine = AlertEngine(configuration: try AlertEngine.Configuration(hysteresis: dec("0.005"), chunkSize: 8))
        var random = SplitMix64(seed: 0xB00C)
        let symbols = [symbol("BTC"), symbol("ETH"), symbol("SOL")]
        for index in 0..<count {
            for symbol in symbols where random.next() % 4 != 0 {
                let below = random.next() % 3 == 0 ? nil : ExactDecimal(Int64(900 + random.next() % 100))
                let above = random.next() % 3 == 0 ? nil : ExactDecimal(Int64(1000 + random.next() % 100))
                try engine.setRule(device: device("device-\(index)"), symbol: symbol, rule: AlertRule(below: below, above: above))
            }
        }
        for step in 0..<60 {
            let price = ExactDecimal(Int64(880 + random.next() % 240))
            _ = try engine.evaluate(symbol: symbols[step % 3], price: price)
        }
        return engine
    }

    @Test("states in any order load to the same engine as states grouped by device")
    func anyOrder() throws {
        let engine = try populated(300)
        let snapshot = engine.snapshot()
        var random = SplitMix64(seed: 7)
        let grouped = AlertEngine(configuration: engine.configuration)
        let shuffled = AlertEngine(configuration: engine.configuration)
        let groupedReport = try grouped.load(snapshot)
        let shuffledReport = try shuffled.load(
            rules: snapshot.rules.shuffled(using: &random), armStates: snapshot.armStates.shuffled(using: &random),
            lastPrices: snapshot.lastPrices, clock: snapshot.clock
        )
        for report in [groupedReport, shuffledReport] {
            #expect(report.rules == snapshot.rules.count)
            #expect(report.restoredStates == snapshot.armStates.count)
            #expect(report.discardedStates == 0 && report.freshStates.isEmpty)
        }
        for loaded in [grouped, shuffled] {
            let again = loaded.snapshot()
            #expect(Set(again.rules) == Set(snapshot.rules))
            #expect(Set(again.armStates) == Set(snapshot.armStates))
            #expect(again.clock == snapshot.clock)
            #expect(loaded.indexesAreConsistent())
        }
    }

    @Test("a tick after a load goes to the loaded book of its symbol, not to the one the last tick went to")
    func tickAfterLoad() throws {
        let engine = AlertEngine()
        // ETH's book is the second, BTC's the first, and the last ticks went to BTC's.
        for (name, price) in [("ETH", "100"), ("BTC", "100"), ("BTC", "101"), ("BTC", "100")] {
            _ = try engine.evaluate(symbol: symbol(name), price: dec(price))
        }
        #expect(engine.books.map(\.symbol) == [symbol("ETH"), symbol("BTC")])
        // The loaded engine knows only ETH, whose book is now the first.
        let rule = RuleRecord(device: device("e"), symbol: symbol("ETH"), rule: AlertRule(below: dec("90"), above: nil))
        _ = try engine.load(rules: [rule], armStates: [], lastPrices: [symbol("ETH"): dec("100")], clock: 10)
        #expect(engine.books.map(\.symbol) == [symbol("ETH")])
        // A BTC tick is BTC's first price: it must not reach ETH's book (where it would fire ETH's rule).
        #expect(try engine.evaluate(symbol: symbol("BTC"), price: dec("80")).alerts.isEmpty)
        #expect(engine.lastPrice(for: symbol("ETH")) == dec("100"))
        #expect(engine.lastPrice(for: symbol("BTC")) == dec("80"))
        // And an ETH tick reaches it.
        #expect(try engine.evaluate(symbol: symbol("ETH"), price: dec("80")).alerts.map(\.device) == [device("e")])
        #expect(engine.indexesAreConsistent())
    }

    @Test("armStates(device:) is every side of the device that is on, and nothing for an unknown device")
    func perDeviceExport() throws {
        let engine = try populated(50)
        let states = engine.snapshot().armStates
        for index in 0..<50 {
            let id = device("device-\(index)")
            #expect(Set(engine.armStates(device: id)) == Set(states.filter { $0.device == id }))
        }
        #expect(engine.armStates(device: device("nobody")).isEmpty)
    }

    @Test("a duplicate in any book refuses the load, naming the record")
    func duplicatesInLaterBooks() throws {
        let engine = AlertEngine()
        let phone = device("phone")
        let rules = [
            RuleRecord(device: phone, symbol: symbol("BTC"), rule: AlertRule(above: dec("100"))),
            RuleRecord(device: phone, symbol: symbol("ETH"), rule: AlertRule(above: dec("10"))),
            RuleRecord(device: phone, symbol: symbol("ETH"), rule: AlertRule(above: dec("11"))),
        ]
        let error = try #require(throws: AlertEngineError.self) {
            try engine.load(rules: rules, armStates: [], lastPrices: [:], clock: 0)
        }
        #expect(error == AlertEngineError(code: .duplicateRecord, message: "two rules for phone ETH"))
        let states = [
            ArmStateRecord(device: phone, symbol: symbol("ETH"), direction: .above, threshold: dec("10"), state: .disarmed),
            ArmStateRecord(device: phone, symbol: symbol("ETH"), direction: .above, threshold: dec("10"), state: .disarmed),
        ]
        let stateError = try #require(throws: AlertEngineError.self) {
            try engine.load(
                rules: Array(rules.prefix(2)), armStates: states, lastPrices: [symbol("ETH"): dec("12")], clock: 0
            )
        }
        #expect(stateError == AlertEngineError(code: .duplicateRecord, message: "two arm states for phone ETH above"))
        #expect(engine.deviceCount == 0)
    }
}
