@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

/// A price evaluated as a resumption (after the symbol's sources went stale) disarms the armed sides it reaches
/// without firing, re-arms as any tick does, and leaves later ticks to fire as usual.
@Suite("Resuming after a stale period")
struct ResumingSemanticsTests {
    @Test("a resumption past a threshold disarms without firing; the next real crossing fires")
    func resumptionDisarms() throws {
        let engine = AlertEngine()
        let btc = symbol("BTC")
        let phone = device("phone")
        try engine.setRule(device: phone, symbol: btc, rule: AlertRule(below: dec("90"), above: dec("105")))
        _ = try engine.evaluate(symbol: btc, price: dec("100"))
        var result = EvaluationResult()
        try engine.evaluate(symbol: btc, price: dec("110"), resuming: true, into: &result)
        #expect(result.alerts.isEmpty)
        #expect(result.suppressed == 1)
        #expect(result.armStateChanges.map(\.state) == [.disarmed])
        #expect(engine.armState(device: phone, symbol: btc, direction: .above)?.state == .disarmed)
        #expect(engine.lastPrice(for: btc) == dec("110"))
        // No fire while it stays up; back through the band re-arms; a fresh crossing fires.
        #expect(try engine.evaluate(symbol: btc, price: dec("111")).alerts.isEmpty)
        #expect(try engine.evaluate(symbol: btc, price: dec("104")).alerts.isEmpty)
        #expect(try engine.evaluate(symbol: btc, price: dec("105")).alerts.map(\.direction) == [.above])
    }

    @Test("a resumption re-arms and fires nothing on the other side either")
    func resumptionReArms() throws {
        let engine = AlertEngine()
        let btc = symbol("BTC")
        let phone = device("phone")
        try engine.setRule(device: phone, symbol: btc, rule: AlertRule(below: dec("90"), above: dec("105")))
        _ = try engine.evaluate(symbol: btc, price: dec("110"))   // first price: above starts disarmed
        var result = EvaluationResult()
        try engine.evaluate(symbol: btc, price: dec("80"), resuming: true, into: &result)
        #expect(result.alerts.isEmpty)
        #expect(result.suppressed == 1)   // the armed below side
        #expect(engine.armState(device: phone, symbol: btc, direction: .above)?.state == .armed(generation: 3))
        #expect(engine.armState(device: phone, symbol: btc, direction: .below)?.state == .disarmed)
    }
}
