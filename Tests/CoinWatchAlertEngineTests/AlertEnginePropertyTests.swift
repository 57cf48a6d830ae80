@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

/// The engine against ``ReferenceAlertModel`` on long seeded random scripts.
@Suite("AlertEngine matches the brute-force model")
struct AlertEnginePropertyTests {
    struct Run: Sendable, CustomTestStringConvertible {
        let seed: UInt64
        let hysteresis: String
        let chunkSize: Int
        let steps: Int

        var testDescription: String { "seed \(seed), h \(hysteresis), chunk \(chunkSize)" }
    }

    @Test("identical alerts and arm states on every step", arguments: [
        Run(seed: 1, hysteresis: "0.005", chunkSize: 8, steps: 3_000),
        Run(seed: 2, hysteresis: "0.005", chunkSize: 8, steps: 3_000),
        Run(seed: 3, hysteresis: "0", chunkSize: 8, steps: 3_000),
        Run(seed: 4, hysteresis: "0.05", chunkSize: 4, steps: 3_000),
        Run(seed: 5, hysteresis: "0.005", chunkSize: 256, steps: 3_000),
    ])
    func matchesReference(run: Run) throws {
        let h = dec(run.hysteresis)
        let engine = AlertEngine(configuration: try AlertEngine.Configuration(hysteresis: h, chunkSize: run.chunkSize))
        var model = ReferenceAlertModel(hysteresis: h)
        var script = RandomScript(seed: run.seed, hysteresis: h)
        var result = EvaluationResult()
        var fired = 0
        var reArmed = 0
        for step in 0..<run.steps {
            let action = script.next()
            switch action {
            case .set(let device, let symbol, let rule):
                let changes = try engine.setRule(device: device, symbol: symbol, rule: rule)
                let expected = model.setRule(device: device, symbol: symbol, rule: rule)
                try #require(Set(changes) == expected, "step \(step): \(action)")
                try #require(changes.count == expected.count, "step \(step): duplicate changes")
            case .remove(let device, let symbol):
                engine.removeRule(device: device, symbol: symbol)
                model.removeRule(device: device, symbol: symbol)
            case .removeDevice(let device):
                engine.removeDevice(device)
                model.removeDevice(device)
            case .tick(let symbol, let price):
                try engine.evaluate(symbol: symbol, price: price, into: &result)
                let expected = model.evaluate(symbol: symbol, price: price)
                try #require(Set(result.alerts) == expected.alerts, "step \(step): \(action)")
                try #require(result.alerts.count == expected.alerts.count, "step \(step): duplicate alerts")
                try #require(Set(result.armStateChanges) == expected.changes, "step \(step): \(action)")
                try #require(result.armStateChanges.count == expected.changes.count, "step \(step): duplicate changes")
                fired += result.alerts.count
                reArmed += result.armStateChanges.count - result.alerts.count
            }
            try #require(engine.clock == model.clock)
            if step % 50 == 0 || step == run.steps - 1 {
                try #require(Set(engine.snapshot().armStates) == model.armStates, "step \(step): states differ")
                try #require(engine.indexesAreConsistent(), "step \(step): index invariants broken")
            }
        }
        // The script must actually exercise crossings, or the comparison proves little.
        #expect(fired > 100)
        #expect(reArmed > 100)
    }
}
