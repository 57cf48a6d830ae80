import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing
@testable import CoinWatchService

/// `StreamAlerts` against a real service and server: settings saved and prices published over RPC, alerts read
/// with the client's typed stream.
@Suite(.timeLimit(.minutes(2)))
struct AlertStreamEndToEndTests {
    /// The device as the app might send it; the server keys it by its canonical form.
    static let appDevice = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    static let canonicalDevice = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

    static func publish(_ client: RPCClientConnection, _ symbol: String, _ price: String) async throws {
        let response = try await client.unary(
            V1.CoinWatch.publishPrices,
            V1.PublishPricesRequest(ticks: [V1.Tick(symbol: symbol, price: decimal(price), timeMs: 0)]))
        #expect(response.accepted == 1)
    }

    @Test func aCrossingReachesTheStreamAsAPushReadyAlert() async throws {
        try await withAlertService { harness in
            let client = try await harness.connect()
            let saved = try await client.unary(
                V1.CoinWatch.saveSettings,
                V1.SaveSettingsRequest(deviceID: Self.appDevice, setRules: ["BTC": rule(below: "4000", above: "5000")]))
            #expect(saved.settings?.deviceID == Self.canonicalDevice)

            let recorder = AlertRecorder(client: client, device: Self.appDevice)
            #expect(await harness.waitForSubscribers(1))
            try await Self.publish(client, "BTC", "4900")
            try await Self.publish(client, "BTC", "5012.3")
            #expect(await recorder.waitForCount(1))
            let alert = try #require(recorder.alerts.first)

            #expect(alert.deviceID == Self.canonicalDevice)
            #expect(alert.symbol == "BTC")
            #expect(alert.direction == .above)
            #expect(PriceFixtures.exact(alert.threshold) == PriceFixtures.price("5000"))
            #expect(PriceFixtures.exact(alert.price) == PriceFixtures.price("5012.3"))
            #expect(!alert.id.isEmpty)
            #expect(alert.timeMs > 0)
            #expect(alert.idempotencyKey.hasPrefix("\(Self.canonicalDevice)|BTC|above|5000|"))
            #expect(alert.apnsCollapseID == "\(Self.canonicalDevice):BTC")
            #expect(alert.pushInterest == "3f2504e0_4f89_11d3_9a0c_0305e82c3301_btc_changed")

            #expect(alert.apnsPayloadJSON.utf8.count <= 4096)
            let json = try JSONSerialization.jsonObject(with: Data(alert.apnsPayloadJSON.utf8))
            let payload = try #require(json as? [String: Any])
            let aps = try #require(payload["aps"] as? [String: Any])
            let apsAlert = try #require(aps["alert"] as? [String: Any])
            #expect(apsAlert["body"] as? String == "BTC rose above 5000 — now 5012.3")
            #expect(apsAlert["title"] as? String == "BTC above 5000")
            #expect(aps["thread-id"] as? String == "BTC")
            #expect(aps["sound"] as? String == "default")
            #expect(aps["category"] as? String == "PRICE_ALERT")
            #expect(payload["alert_id"] as? String == alert.id)
            #expect(payload["device"] as? String == Self.canonicalDevice)
            #expect(payload["threshold"] as? String == "5000")
            #expect(payload["price"] as? String == "5012.3")

            // The first price fired nothing and the crossing fired once: the next thing on the stream is the next
            // crossing, the other side of the rule.
            try await Self.publish(client, "BTC", "3990.5")
            #expect(await recorder.waitForCount(2))
            #expect(recorder.summaries == ["BTC above 5000 @ 5012.3", "BTC below 4000 @ 3990.5"])
            #expect(harness.stats.alertsFired == 2)
            #expect(recorder.alerts.last?.idempotencyKey.hasPrefix("\(Self.canonicalDevice)|BTC|below|4000|") == true)

            // Written to a stream, they left the outbox.
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(await eventually { harness.stats.alertsDelivered == 2 })
            recorder.cancel()
            #expect(await harness.waitForSubscribers(0))
        }
    }

    @Test(arguments: ["", "has space", String(repeating: "a", count: 129), "dévice"])
    func aBadDeviceIDIsRefusedNamingTheField(_ device: String) async throws {
        try await withAlertService { harness in
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await recorder.waitForEnd())
            let error = try #require(recorder.error)
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("device_id"))
            #expect(recorder.count == 0)
            #expect(harness.stats.subscribers == 0)
        }
    }

    @Test func aStreamOpenedWhileTheServiceClosesEndsUnavailable() async throws {
        try await withAlertService { harness in
            let client = try await harness.connect()
            harness.service.close()
            let recorder = AlertRecorder(client: client, device: "late-device")
            #expect(await recorder.waitForEnd())
            #expect(recorder.error?.code == .unavailable)
        }
    }
}
