@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

@Suite("AlertEngine persistence")
struct AlertEnginePersistenceTests {
    let btc = symbol("BTC")

    /// A BTC arm state record.
    private func state(
        _ device: DeviceID, _ direction: AlertDirection, _ threshold: String, _ state: ArmState
    ) -> ArmStateRecord {
        ArmStateRecord(device: device, symbol: btc, direction: direction, threshold: dec(threshold), state: state)
    }

    /// Applies one step to an engine, returning what it reported, as sets.
    private func apply(_ step: ScriptStep, to engine: AlertEngine) throws -> (Set<FiredAlert>, Set<ArmStateRecord>) {
        switch step {
        case .set(let device, let symbol, let rule):
            return ([], Set(try engine.setRule(device: device, symbol: symbol, rule: rule)))
        case .remove(let device, let symbol):
            engine.removeRule(device: device, symbol: symbol)
        case .removeDevice(let device):
            engine.removeDevice(device)
        case .tick(let symbol, let price):
            let result = try engine.evaluate(symbol: symbol, price: price)
            return (Set(result.alerts), Set(result.armStateChanges))
        }
        return ([], [])
    }

    private func sameState(_ a: AlertEngine, _ b: AlertEngine) -> Bool {
        let left = a.snapshot()
        let right = b.snapshot()
        return Set(left.rules) == Set(right.rules) && Set(left.armStates) == Set(right.armStates)
            && left.lastPrices == right.lastPrices && left.clock == right.clock
    }

    @Test("a reloaded engine continues exactly like the uninterrupted one", arguments: [11, 12, 13] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        let configuration = try AlertEngine.Configuration(hysteresis: dec("0.005"), chunkSize: 8)
        let uninterrupted = AlertEngine(configuration: configuration)
        var restarted = AlertEngine(configuration: configuration)
        var script = RandomScript(seed: seed, deviceCount: 150, hysteresis: dec("0.005"))
        var alerts = 0
        for step in 0..<3_000 {
            if step % 600 == 0 {
                // Restart: a new engine from the previous one's exported state.
                let snapshot = restarted.snapshot()
                let fresh = AlertEngine(configuration: configuration)
                let report = try fresh.load(snapshot)
                try #require(report.rules == snapshot.rules.count)
                try #require(report.restoredStates == snapshot.armStates.count)
                try #require(report.discardedStates == 0 && report.freshStates.isEmpty)
                restarted = fresh
                try #require(sameState(uninterrupted, restarted), "step \(step): state after load")
                try #require(restarted.indexesAreConsistent())
            }
            let action = script.next()
            let expected = try apply(action, to: uninterrupted)
            let actual = try apply(action, to: restarted)
            try #require(actual == expected, "step \(step): \(action)")
            alerts += expected.0.count
        }
        #expect(sameState(uninterrupted, restarted))
        #expect(alerts > 50)
    }

    @Test("a side without a persisted state starts fresh: it may wait for a re-arm but never fires")
    func missingStates() throws {
        let engine = AlertEngine()
        let past = device("past")
        let near = device("near")
        let report = try engine.load(
            rules: [
                RuleRecord(device: past, symbol: btc, rule: AlertRule(above: dec("100"))),
                RuleRecord(device: near, symbol: btc, rule: AlertRule(above: dec("200"))),
            ],
            armStates: [],
            lastPrices: [btc: dec("150")],
            clock: 41
        )
        #expect(report.rules == 2)
        #expect(engine.clock == 42)
        #expect(Set(report.freshStates) == [
            state(past, .above, "100", .disarmed),
            state(near, .above, "200", .armed(generation: 42)),
        ])
        let result = try engine.evaluate(symbol: btc, price: dec("250"))
        #expect(result.alerts.map(\.device) == [near])
        #expect(result.alerts.first?.generation == 42)
    }

    @Test("restored states and generations are kept; stale ones are discarded")
    func restoredStates() throws {
        let engine = AlertEngine()
        let armed = device("armed")
        let fired = device("fired")
        let changed = device("changed")
        let report = try engine.load(
            rules: [
                RuleRecord(device: armed, symbol: btc, rule: AlertRule(above: dec("100"))),
                RuleRecord(device: fired, symbol: btc, rule: AlertRule(above: dec("99"))),
                RuleRecord(device: changed, symbol: btc, rule: AlertRule(above: dec("98"))),
            ],
            armStates: [
                state(armed, .above, "100", .armed(generation: 77)),
                state(fired, .above, "99", .disarmed),
                // Recorded for the threshold before the rule was changed.
                state(changed, .above, "90", .disarmed),
                // For a side that is off, and for a device with no rule.
                state(armed, .below, "50", .disarmed),
                state(device("gone"), .above, "1", .disarmed),
            ],
            lastPrices: [btc: dec("99.2")],
            clock: 10
        )
        #expect(report.restoredStates == 2)
        #expect(report.discardedStates == 3)
        // 77 is the newest generation; the changed side then takes a fresh state at 78.
        #expect(engine.clock == 78)
        #expect(report.freshStates.map(\.device) == [changed])
        #expect(engine.armState(device: changed, symbol: btc, direction: .above)?.state == .disarmed)
        let result = try engine.evaluate(symbol: btc, price: dec("100"))
        #expect(Set(result.alerts) == [
            FiredAlert(
                device: armed, symbol: btc, direction: .above, threshold: dec("100"), price: dec("100"), generation: 77
            ),
        ])
    }

    @Test("a crossing whose fired state was lost in a crash is re-delivered with the same key")
    func redeliveryAfterCrash() throws {
        let engine = AlertEngine()
        let phone = device("phone")
        try engine.setRule(device: phone, symbol: btc, rule: AlertRule(above: dec("100")))
        _ = try engine.evaluate(symbol: btc, price: dec("99"))
        let persisted = engine.snapshot()
        let first = try #require(try engine.evaluate(symbol: btc, price: dec("101")).alerts.first)

        // The process died before the tick's state was written: restart from the earlier state.
        let restarted = AlertEngine()
        try restarted.load(persisted)
        let again = try #require(try restarted.evaluate(symbol: btc, price: dec("100.5")).alerts.first)
        #expect(again.idempotencyKey == first.idempotencyKey)
    }

    @Test("states for a symbol with no price yet stay waiting")
    func waitingSymbol() throws {
        let engine = AlertEngine()
        let phone = device("phone")
        let snapshotBefore = AlertEngineSnapshot(
            rules: [RuleRecord(device: phone, symbol: btc, rule: AlertRule(below: dec("90"), above: dec("100")))],
            armStates: [
                state(phone, .above, "100", .awaitingPrice),
                state(phone, .below, "90", .armed(generation: 3)),
            ],
            lastPrices: [:],
            clock: 5
        )
        let report = try engine.load(snapshotBefore)
        #expect(report.restoredStates == 1)
        #expect(report.discardedStates == 1)
        #expect(engine.clock == 5)
        #expect(engine.armState(device: phone, symbol: btc, direction: .below)?.state == .awaitingPrice)
        let first = try engine.evaluate(symbol: btc, price: dec("95"))
        #expect(first.alerts.isEmpty)
        #expect(Set(first.armStateChanges.map(\.state)) == [.armed(generation: 6)])
        #expect(first.armStateChanges.count == 2)
    }

    @Test("bad loads are refused with the engine unchanged")
    func refusedLoads() throws {
        let engine = AlertEngine()
        let phone = device("phone")
        try engine.setRule(device: phone, symbol: btc, rule: AlertRule(above: dec("100")))
        _ = try engine.evaluate(symbol: btc, price: dec("90"))
        let before = engine.snapshot()
        let rule = RuleRecord(device: phone, symbol: btc, rule: AlertRule(above: dec("120")))
        let stale = state(phone, .above, "120", .disarmed)

        let cases: [(AlertEngineError.Code, () throws -> Void)] = [
            (.duplicateRecord, { _ = try engine.load(rules: [rule, rule], armStates: [], lastPrices: [:], clock: 0) }),
            (.duplicateRecord, {
                _ = try engine.load(
                    rules: [rule], armStates: [stale, stale], lastPrices: [self.btc: dec("1")], clock: 0
                )
            }),
            (.invalidRule, {
                _ = try engine.load(
                    rules: [RuleRecord(device: phone, symbol: self.btc, rule: AlertRule(below: dec("-1")))],
                    armStates: [], lastPrices: [:], clock: 0
                )
            }),
            (.invalidPrice, {
                _ = try engine.load(rules: [rule], armStates: [], lastPrices: [self.btc: .zero], clock: 0)
            }),
        ]
        for (code, load) in cases {
            let error = try #require(throws: AlertEngineError.self) { try load() }
            #expect(error.code == code)
            #expect(!error.message.isEmpty)
            let after = engine.snapshot()
            #expect(Set(after.armStates) == Set(before.armStates) && after.clock == before.clock)
            #expect(after.rules == before.rules && after.lastPrices == before.lastPrices)
        }
    }
}
