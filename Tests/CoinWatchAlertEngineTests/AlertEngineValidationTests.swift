@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

@Suite("AlertEngine input checks and bookkeeping")
struct AlertEngineValidationTests {
    let btc = symbol("BTC")

    @Test("a zero or negative price is refused and changes nothing", arguments: ["0", "-64250.5"])
    func badPrice(price: String) throws {
        let engine = AlertEngine()
        try engine.setRule(device: device("a"), symbol: btc, rule: AlertRule(below: dec("90")))
        _ = try engine.evaluate(symbol: btc, price: dec("100"))
        let clock = engine.clock
        let error = try #require(throws: AlertEngineError.self) { try engine.evaluate(symbol: btc, price: dec(price)) }
        #expect(error.code == .invalidPrice)
        #expect(error.description.contains(price))
        #expect(engine.clock == clock)
        #expect(engine.lastPrice(for: btc) == dec("100"))
        #expect(engine.armState(device: device("a"), symbol: btc, direction: .below)?.state == .armed(generation: 2))
    }

    @Test("a negative threshold is refused and changes nothing")
    func badRule() throws {
        let engine = AlertEngine()
        try engine.setRule(device: device("a"), symbol: btc, rule: AlertRule(above: dec("100")))
        let error = try #require(throws: AlertEngineError.self) {
            try engine.setRule(device: device("a"), symbol: btc, rule: AlertRule(below: dec("-1"), above: dec("110")))
        }
        #expect(error.code == .invalidRule)
        #expect(engine.rule(device: device("a"), symbol: btc) == AlertRule(above: dec("100")))
        #expect(engine.clock == 1)
    }

    @Test("hysteresis must lie in 0 ..< 1", arguments: ["-0.001", "1", "1.5"])
    func badHysteresis(value: String) throws {
        let error = try #require(throws: AlertEngineError.self) {
            try AlertEngine.Configuration(hysteresis: dec(value))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(value))
    }

    @Test("hysteresis at the ends of its range is accepted", arguments: ["0", "0.999999999999999999"])
    func edgeHysteresis(value: String) throws {
        let configuration = try AlertEngine.Configuration(hysteresis: dec(value))
        #expect(configuration.hysteresis == dec(value))
    }

    @Test("zero thresholds are off, and the rule reads back without them")
    func zeroIsOff() throws {
        let engine = AlertEngine()
        try engine.setRule(device: device("a"), symbol: btc, rule: AlertRule(below: .zero, above: dec("100")))
        #expect(engine.rule(device: device("a"), symbol: btc) == AlertRule(above: dec("100")))
        #expect(engine.armState(device: device("a"), symbol: btc, direction: .below) == nil)
        #expect(engine.activeSideCount == 1)
    }

    @Test("removing what is not there reports false")
    func removeUnknown() throws {
        let engine = AlertEngine()
        #expect(!engine.removeRule(device: device("a"), symbol: btc))
        #expect(!engine.removeDevice(device("a")))
        try engine.setRule(device: device("a"), symbol: btc, rule: AlertRule(above: dec("100")))
        #expect(!engine.removeRule(device: device("a"), symbol: symbol("ETH")))
        #expect(engine.removeRule(device: device("a"), symbol: btc))
        #expect(!engine.removeRule(device: device("a"), symbol: btc))
    }

    @Test("device numbers are freed with a device's last rule and reused")
    func deviceNumberReuse() throws {
        let engine = AlertEngine()
        let eth = symbol("ETH")
        for name in ["a", "b", "c"] {
            try engine.setRule(device: device(name), symbol: btc, rule: AlertRule(above: dec("100")))
            try engine.setRule(device: device(name), symbol: eth, rule: AlertRule(below: dec("10")))
        }
        #expect(engine.deviceCount == 3)
        #expect(engine.removeRule(device: device("b"), symbol: btc))
        #expect(engine.deviceCount == 3)
        #expect(engine.removeRule(device: device("b"), symbol: eth))
        #expect(engine.deviceCount == 2)
        #expect(engine.removeDevice(device("a")))
        #expect(engine.deviceCount == 1)
        try engine.setRule(device: device("d"), symbol: btc, rule: AlertRule(above: dec("101")))
        try engine.setRule(device: device("e"), symbol: btc, rule: AlertRule(above: dec("102")))
        #expect(engine.devices.count == 3)
        #expect(engine.deviceCount == 3)
        #expect(engine.indexesAreConsistent())
        _ = try engine.evaluate(symbol: btc, price: dec("99"))
        let fired = try engine.evaluate(symbol: btc, price: dec("200")).alerts
        #expect(Set(fired.map(\.device)) == [device("c"), device("d"), device("e")])
    }
}
