@testable import CoinWatchAlertEngine
import CoinWatchModel
import Testing

/// The crossing rules of ``AlertEngine``, one scenario per row. All ticks are BTC. The engine clock
/// advances by one on every `set` and every `tick` (never on `remove`), and a side's generation is
/// the clock when it armed, so the generations written below can be read off the step numbers.
@Suite("Crossing semantics")
struct CrossingSemanticsTests {
    enum Step: Sendable {
        case set(String, below: String?, above: String?)
        case remove(String)
        case removeDevice(String)
        /// A tick, and exactly the alerts it must fire.
        case tick(String, fires: [Fire])
        /// The side's state at this point (`nil`: the side is off).
        case state(String, AlertDirection, ArmState?)
    }

    struct Fire: Hashable, Sendable {
        let device: String
        let direction: AlertDirection
        let threshold: String
        let generation: UInt64

        init(_ device: String, _ direction: AlertDirection, _ threshold: String, generation: UInt64) {
            self.device = device
            self.direction = direction
            self.threshold = threshold
            self.generation = generation
        }
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        let name: String
        var hysteresis = "0.005"
        let steps: [Step]

        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "the first price fires nothing, even far past the threshold", steps: [
            .set("a", below: "90", above: "100"),                 // clock 1
            .state("a", .above, .awaitingPrice),
            .tick("150", fires: []),                              // clock 2
            .state("a", .above, .disarmed),
            .state("a", .below, .armed(generation: 2)),
            .tick("160", fires: []),                              // 3
            .tick("99.4", fires: []),                             // 4: ≤ 99.5 re-arms
            .state("a", .above, .armed(generation: 4)),
            .tick("100", fires: [Fire("a", .above, "100", generation: 4)]),
        ]),
        Scenario(name: "a price exactly at the threshold fires, once", steps: [
            .set("a", below: nil, above: "100"),                  // 1
            .tick("90", fires: []),                               // 2: armed, generation 2
            .tick("100", fires: [Fire("a", .above, "100", generation: 2)]),  // 3
            .tick("100", fires: []),                              // 4: A to A again
            .tick("99.999", fires: []),                           // 5: inside the band
            .tick("100", fires: []),                              // 6
            .state("a", .above, .disarmed),
        ]),
        Scenario(name: "below: exactly at the threshold fires, once", steps: [
            .set("a", below: "100", above: nil),                  // 1
            .tick("110", fires: []),                              // 2
            .tick("100", fires: [Fire("a", .below, "100", generation: 2)]),  // 3
            .tick("100", fires: []),                              // 4
            .tick("100.4999", fires: []),                         // 5: boundary is 100.5
            .tick("100", fires: []),                              // 6
            .tick("100.5", fires: []),                            // 7: re-arms exactly at the boundary
            .state("a", .below, .armed(generation: 7)),
            .tick("99", fires: [Fire("a", .below, "100", generation: 7)]),
        ]),
        Scenario(name: "hysteresis: no re-arm inside the band, re-arm past it, fire with a new generation", steps: [
            .set("a", below: nil, above: "100"),                  // 1
            .tick("99", fires: []),                               // 2
            .tick("101", fires: [Fire("a", .above, "100", generation: 2)]),  // 3
            .tick("99.6", fires: []),                             // 4: 99.6 > 99.5, still disarmed
            .tick("100.2", fires: []),                            // 5
            .tick("99.5", fires: []),                             // 6: exactly A × (1 − h): re-arms
            .state("a", .above, .armed(generation: 6)),
            .tick("99.7", fires: []),                             // 7: armed stays armed inside the band
            .tick("100", fires: [Fire("a", .above, "100", generation: 6)]),  // 8
        ]),
        Scenario(name: "a single re-arm after firing takes generation + 1 when it is the next step", steps: [
            .set("a", below: nil, above: "100"),                  // 1
            .tick("99", fires: []),                               // 2
            .tick("100", fires: [Fire("a", .above, "100", generation: 2)]),  // 3
            .tick("99", fires: []),                               // 4: re-arms, generation 4
            .tick("100", fires: [Fire("a", .above, "100", generation: 4)]),
        ]),
        Scenario(name: "zero hysteresis re-arms strictly below the threshold, never at it", hysteresis: "0", steps: [
            .set("a", below: nil, above: "100"),                  // 1
            .tick("99", fires: []),                               // 2
            .tick("100", fires: [Fire("a", .above, "100", generation: 2)]),  // 3
            .tick("100", fires: []),                              // 4
            .tick("99.99999", fires: []),                         // 5: re-arms
            .tick("100", fires: [Fire("a", .above, "100", generation: 5)]),
        ]),
        Scenario(name: "a rule saved while the price is past it starts disarmed", steps: [
            .tick("150", fires: []),                              // 1
            .set("a", below: nil, above: "100"),                  // 2
            .state("a", .above, .disarmed),
            .tick("160", fires: []),                              // 3
            .tick("99.9", fires: []),                             // 4: inside the band
            .tick("150", fires: []),                              // 5
            .tick("99.5", fires: []),                             // 6: re-armed
            .tick("100", fires: [Fire("a", .above, "100", generation: 6)]),
        ]),
        Scenario(name: "a rule saved exactly at the price starts disarmed", steps: [
            .tick("100", fires: []),                              // 1
            .set("a", below: "100", above: "100"),                // 2
            .state("a", .above, .disarmed),
            .state("a", .below, .disarmed),
            .tick("100", fires: []),
            .tick("100.4", fires: []),
            .tick("99.6", fires: []),
        ]),
        Scenario(name: "a rule saved on the near side is armed at once, without the band", steps: [
            .tick("99.9", fires: []),                             // 1
            .set("a", below: "99.8", above: "100"),               // 2
            .state("a", .above, .armed(generation: 2)),
            .state("a", .below, .armed(generation: 2)),
            .tick("100", fires: [Fire("a", .above, "100", generation: 2)]),
        ]),
        Scenario(name: "a changed threshold is a new rule; an unchanged one keeps its state", steps: [
            .tick("90", fires: []),                               // 1
            .set("a", below: "80", above: "100"),                 // 2: both armed, generation 2
            .set("a", below: "80", above: "95"),                  // 3: above is new (armed 3), below kept
            .state("a", .below, .armed(generation: 2)),
            .tick("96", fires: [Fire("a", .above, "95", generation: 3)]),  // 4
            .set("a", below: "80", above: "95"),                  // 5: unchanged: stays disarmed
            .tick("96.5", fires: []),                             // 6
            .set("a", below: "80", above: "97"),                  // 7: changed, fresh against 96.5
            .tick("97", fires: [Fire("a", .above, "97", generation: 7)]),  // 8
            .set("a", below: "80", above: "96"),                  // 9: price 97 is past 96: disarmed
            .tick("98", fires: []),
        ]),
        Scenario(name: "a removed rule fires nothing; re-adding it starts fresh", steps: [
            .tick("90", fires: []),                               // 1
            .set("a", below: nil, above: "100"),                  // 2
            .remove("a"),
            .state("a", .above, nil),
            .tick("110", fires: []),                              // 3
            .set("a", below: nil, above: "100"),                  // 4: disarmed (110 ≥ 100)
            .tick("120", fires: []),                              // 5
            .removeDevice("a"),
            .tick("90", fires: []),                               // 6
            .tick("120", fires: []),
        ]),
        Scenario(name: "setting both sides off removes the rule", steps: [
            .tick("90", fires: []),
            .set("a", below: "80", above: "100"),
            .set("a", below: "0", above: nil),
            .state("a", .above, nil),
            .state("a", .below, nil),
            .tick("110", fires: []),
            .tick("70", fires: []),
        ]),
        Scenario(name: "both sides of one rule, alternately", steps: [
            .set("a", below: "90", above: "110"),                 // 1
            .tick("100", fires: []),                              // 2: both armed, generation 2
            .tick("111", fires: [Fire("a", .above, "110", generation: 2)]),  // 3
            .tick("89", fires: [Fire("a", .below, "90", generation: 2)]),    // 4: above re-arms (≤ 109.45)
            .state("a", .above, .armed(generation: 4)),
            .tick("111", fires: [Fire("a", .above, "110", generation: 4)]),  // 5: below re-arms (≥ 90.45)
            .state("a", .below, .armed(generation: 5)),
        ]),
        Scenario(name: "a big jump crosses many thresholds at once, then jumps back", steps: [
            .set("a", below: "90", above: "110"),                 // 1
            .set("b", below: nil, above: "105"),                  // 2
            .set("c", below: "95", above: nil),                   // 3
            .tick("100", fires: []),                              // 4: all armed, generation 4
            .tick("200", fires: [
                Fire("a", .above, "110", generation: 4), Fire("b", .above, "105", generation: 4),
            ]),                                                   // 5
            .tick("50", fires: [
                Fire("a", .below, "90", generation: 4), Fire("c", .below, "95", generation: 4),
            ]),                                                   // 6: a and b above re-arm
            .tick("200", fires: [
                Fire("a", .above, "110", generation: 6), Fire("b", .above, "105", generation: 6),
            ]),
        ]),
        Scenario(name: "a jump from one side straight past the other fires only the side it reaches", steps: [
            .set("a", below: "90", above: "110"),                 // 1
            .tick("120", fires: []),                              // 2: above disarmed, below armed
            .tick("80", fires: [Fire("a", .below, "90", generation: 2)]),    // 3: and above re-arms
            .tick("120", fires: [Fire("a", .above, "110", generation: 3)]),
        ]),
        Scenario(name: "several devices on one threshold all fire, each with its own key", steps: [
            .set("a", below: nil, above: "100"),                  // 1
            .set("b", below: nil, above: "100"),                  // 2
            .tick("99", fires: []),                               // 3
            .set("c", below: nil, above: "100"),                  // 4
            .tick("100.01", fires: [
                Fire("a", .above, "100", generation: 3), Fire("b", .above, "100", generation: 3),
                Fire("c", .above, "100", generation: 4),
            ]),
        ]),
        Scenario(name: "odd rules (below over above, or both equal) work side by side", steps: [
            .set("a", below: "110", above: "90"),                 // 1
            .set("b", below: "100", above: "100"),                // 2
            .tick("100", fires: []),                              // 3: every side at or past: disarmed
            .state("a", .above, .disarmed),
            .state("a", .below, .disarmed),
            .tick("85", fires: []),                               // 4: a above and b above re-arm
            .tick("95", fires: [Fire("a", .above, "90", generation: 4)]),    // 5
            .tick("111", fires: [Fire("b", .above, "100", generation: 4)]),  // 6: a and b below re-arm
            .tick("105", fires: [Fire("a", .below, "110", generation: 6)]),
        ]),
        Scenario(name: "thresholds with 18 decimals compare exactly", steps: [
            .set("a", below: nil, above: "1.000000000000000001"),  // 1
            .tick("1", fires: []),                                  // 2
            .tick("1.000000000000000001", fires: [Fire("a", .above, "1.000000000000000001", generation: 2)]),
            // A × 0.995 = 0.995000000000000000995: 0.995000000000000001 is above it.
            .tick("0.995000000000000001", fires: []),
            .state("a", .above, .disarmed),
            .tick("0.995", fires: []),                              // 5: re-arms
            .state("a", .above, .armed(generation: 5)),
        ]),
        Scenario(name: "thresholds near the largest decimal compare exactly", steps: [
            .set("a", below: nil, above: "9223372036854775807"),   // 1
            .tick("1", fires: []),                                  // 2
            .tick("9223372036854775807", fires: [Fire("a", .above, "9223372036854775807", generation: 2)]),
            // A × 0.995 = 9177255176670501927.965
            .tick("9177255176670501928", fires: []),
            .state("a", .above, .disarmed),
            .tick("9177255176670501927", fires: []),                // 5
            .state("a", .above, .armed(generation: 5)),
        ]),
    ]

    @Test("scenarios", arguments: scenarios)
    func scenario(_ scenario: Scenario) throws {
        let engine = AlertEngine(
            configuration: try AlertEngine.Configuration(hysteresis: dec(scenario.hysteresis), chunkSize: 4)
        )
        let btc = symbol("BTC")
        for (index, step) in scenario.steps.enumerated() {
            switch step {
            case .set(let name, let below, let above):
                try engine.setRule(
                    device: device(name), symbol: btc, rule: AlertRule(below: below.map(dec), above: above.map(dec))
                )
            case .remove(let name):
                #expect(engine.removeRule(device: device(name), symbol: btc), "step \(index)")
            case .removeDevice(let name):
                #expect(engine.removeDevice(device(name)), "step \(index)")
            case .tick(let price, let fires):
                let result = try engine.evaluate(symbol: btc, price: dec(price))
                let expected = Set(fires.map { fire in
                    FiredAlert(
                        device: device(fire.device), symbol: btc, direction: fire.direction,
                        threshold: dec(fire.threshold), price: dec(price), generation: fire.generation
                    )
                })
                #expect(Set(result.alerts) == expected, "step \(index): tick \(price)")
                #expect(result.alerts.count == expected.count, "step \(index): duplicate alerts")
            case .state(let name, let direction, let state):
                let record = engine.armState(device: device(name), symbol: btc, direction: direction)
                #expect(record?.state == state, "step \(index): \(name) \(direction)")
            }
            #expect(engine.indexesAreConsistent(), "step \(index)")
        }
    }

    @Test("the idempotency key is the same for a re-delivery and different for a later crossing")
    func idempotencyKey() throws {
        let engine = AlertEngine()
        let btc = symbol("BTC")
        let phone = device("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        try engine.setRule(device: phone, symbol: btc, rule: AlertRule(above: dec("64250.5")))
        _ = try engine.evaluate(symbol: btc, price: dec("64000"))
        let first = try #require(try engine.evaluate(symbol: btc, price: dec("64300")).alerts.first)
        #expect(first.idempotencyKey == "3f2504e0-4f89-11d3-9a0c-0305e82c3301|BTC|above|64250.5|2")
        // A re-delivery is the same alert value, so the same key; a later crossing is not.
        _ = try engine.evaluate(symbol: btc, price: dec("60000"))
        let second = try #require(try engine.evaluate(symbol: btc, price: dec("64250.5")).alerts.first)
        #expect(second.idempotencyKey != first.idempotencyKey)
        #expect(second.generation > first.generation)
    }

    @Test("re-arm boundaries for display round toward the side that keeps them exact")
    func reArmBoundary() throws {
        let configuration = AlertEngine.Configuration.standard
        #expect(configuration.hysteresis == dec("0.005"))
        #expect(try configuration.reArmBoundary(direction: .above, threshold: dec("64250.5")) == dec("63929.2475"))
        #expect(try configuration.reArmBoundary(direction: .below, threshold: dec("100")) == dec("100.5"))
        #expect(
            try configuration.reArmBoundary(direction: .above, threshold: dec("1.000000000000000001")) == dec("0.995")
        )
        #expect(
            try configuration.reArmBoundary(direction: .below, threshold: dec("1.000000000000000001"))
                == dec("1.005000000000000002")
        )
    }
}
