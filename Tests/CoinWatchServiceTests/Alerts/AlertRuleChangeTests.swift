import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Settings changes reach the alert index before the next tick: SaveSettings, remove_symbols and DeleteSettings
/// over RPC.
@Suite(.timeLimit(.minutes(2)))
struct AlertRuleChangeTests {
    static func save(_ client: RPCClientConnection, _ request: V1.SaveSettingsRequest) async throws {
        _ = try await client.unary(V1.CoinWatch.saveSettings, request)
    }

    /// How many rule sides the device's `alert:arm:` record in LevelDB holds (0 when it has none).
    static func storedStates(_ database: Database, device: String) throws -> Int {
        let id = try DeviceID(validating: device)
        let key = AlertStorage.armKey(id)
        guard let value = try database.get(key) else { return 0 }
        return try decodeArmRecord(value, key: key, device: id).count
    }

    @Test func changesAndRemovalsTakeEffectOnTheNextTick() async throws {
        try await withAlertService { harness in
            let device = "rules-device"
            let client = try await harness.connect()
            try await Self.save(
                client,
                V1.SaveSettingsRequest(deviceID: device, setRules: ["BTC": rule(above: "5000"), "ETH": rule(above: "3000")]))
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4900")
            harness.publish("ETH", "2900")

            // A lower threshold, saved between ticks, is the one the next tick meets.
            try await Self.save(client, V1.SaveSettingsRequest(deviceID: device, setRules: ["BTC": rule(above: "4950")]))
            harness.publish("BTC", "4960")

            // A removed symbol fires nothing.
            try await Self.save(client, V1.SaveSettingsRequest(deviceID: device, removeSymbols: ["ETH"]))
            harness.publish("ETH", "3100")

            // Deleted settings fire nothing, and leave no arm state behind.
            let deleted = try await client.unary(V1.CoinWatch.deleteSettings, V1.DeleteSettingsRequest(deviceID: device))
            #expect(deleted.existed)
            #expect(await eventually { (try? Self.storedStates(harness.database, device: device)) == 0 })
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5100")

            // Re-created settings work again, armed against the current price.
            try await Self.save(client, V1.SaveSettingsRequest(deviceID: device, setRules: ["BTC": rule(above: "5200")]))
            harness.publish("BTC", "5250")

            #expect(await recorder.waitForCount(2))
            #expect(recorder.summaries == ["BTC above 4950 @ 4960", "BTC above 5200 @ 5250"])
            #expect(harness.stats.alertsFired == 2)
        }
    }

    @Test func aThresholdMovedAwayFromTheNextPriceDoesNotFire() async throws {
        try await withAlertService { harness in
            let device = "raised-device"
            let client = try await harness.connect()
            try await Self.save(client, V1.SaveSettingsRequest(deviceID: device, setRules: ["BTC": rule(above: "5000")]))
            let recorder = AlertRecorder(client: client, device: device)
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4900")
            try await Self.save(client, V1.SaveSettingsRequest(deviceID: device, setRules: ["BTC": rule(above: "5100")]))
            harness.publish("BTC", "5050")  // past the old threshold only
            harness.publish("BTC", "5100")  // reaches the new one
            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5100 @ 5100"])
            #expect(harness.stats.alertsFired == 1)
        }
    }
}
