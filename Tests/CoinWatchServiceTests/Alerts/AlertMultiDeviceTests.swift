import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Many devices, one price walk: the alerts streamed out are exactly those a brute-force reference computes.
@Suite(.timeLimit(.minutes(4)))
struct AlertMultiDeviceTests {
    static let devices = 1_000
    static let ticks = 400

    /// A random rule: above only, below only, or both, with whole thresholds around the walk's start.
    static func randomRule(_ random: inout SplitMix64) -> (below: Int64?, above: Int64?) {
        let a = Int64.random(in: 4_600...5_400, using: &random)
        var b = Int64.random(in: 4_600...5_400, using: &random)
        if b == a { b += 1 }
        switch random.next() % 3 {
        case 0: return (nil, a)
        case 1: return (a, nil)
        default: return (min(a, b), max(a, b))
        }
    }

    /// `tenths` as decimal text: 50123 → "5012.3".
    static func text(tenths: Int64) -> String {
        "\(tenths / 10).\(tenths % 10)"
    }

    static func tenths(_ decimal: V1.Decimal?) -> Int64? {
        guard let value = PriceFixtures.exact(decimal) else { return nil }
        switch value.scale {
        case 0: return value.mantissa * 10
        case 1: return value.mantissa
        default: return nil
        }
    }

    @Test func aThousandDevicesReceiveExactlyTheBruteForceAlerts() async throws {
        try await withAlertService { harness in
            #expect(harness.service.configuration.alerts.hysteresis == ExactDecimal("0.005"))
            var random = SplitMix64(seed: 0xA1E2_7C0F_FEE5)
            var model = AlertReferenceModel(bandPerMille: 5)
            let names = (0..<Self.devices).map { "device-\($0)" }

            var requests: [V1.SaveSettingsRequest] = []
            for name in names {
                let (below, above) = Self.randomRule(&random)
                if let below { model.addSide(device: name, direction: .below, threshold: below) }
                if let above { model.addSide(device: name, direction: .above, threshold: above) }
                requests.append(V1.SaveSettingsRequest(
                    deviceID: name, setRules: ["BTC": rule(below: below.map { "\($0)" }, above: above.map { "\($0)" })]))
            }
            // Saved concurrently, so the store commits them in a few group batches.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for request in requests {
                    group.addTask { _ = try await harness.service.settings.save(request) }
                }
                try await group.waitForAll()
            }

            var clients: [RPCClientConnection] = []
            for _ in 0..<4 { clients.append(try await harness.connect()) }
            let recorders = names.enumerated().map { index, name in
                AlertRecorder(client: clients[index % clients.count], device: name)
            }
            // Every stream is registered before the first tick, so every alert is delivered live (none coalesced).
            #expect(await harness.waitForSubscribers(Self.devices))

            var expected: [AlertReferenceModel.Expected] = []
            var price: Int64 = 50_000
            for _ in 0..<Self.ticks {
                price = min(max(price + Int64.random(in: -600...600, using: &random), 44_000), 56_000)
                expected += model.tick(tenths: price)
                harness.publish("BTC", Self.text(tenths: price))
            }
            #expect(!expected.isEmpty)

            // One more subscriber, registered by the alert thread after every tick above: once it counts, the
            // fired total is final.
            let sentinel = AlertRecorder(client: clients[0], device: "sentinel-device")
            #expect(await harness.waitForSubscribers(Self.devices + 1))
            let fired = harness.stats.alertsFired
            #expect(fired == expected.count)
            #expect(await eventually(timeout: .seconds(60)) {
                recorders.reduce(0) { $0 + $1.count } >= fired
            })

            var received: [AlertReferenceModel.Expected] = []
            var keys = Set<String>()
            for (name, recorder) in zip(names, recorders) {
                for alert in recorder.alerts {
                    #expect(alert.deviceID == name)
                    #expect(alert.symbol == "BTC")
                    keys.insert(alert.idempotencyKey)
                    let direction: AlertReferenceModel.Direction = alert.direction == .above ? .above : .below
                    received.append(AlertReferenceModel.Expected(
                        device: alert.deviceID, direction: direction,
                        threshold: (Self.tenths(alert.threshold) ?? -10) / 10, priceTenths: Self.tenths(alert.price) ?? -1))
                }
            }
            #expect(received.count == expected.count)
            #expect(received.sorted() == expected.sorted())
            // Every crossing is its own arming: no two alerts share an idempotency key.
            #expect(keys.count == received.count)
            #expect(sentinel.count == 0)
        }
    }
}
