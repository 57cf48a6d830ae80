import CoinWatchModel
import CoinWatchProto
import CoinWatchPush
import CoinWatchRPC
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchService

/// Cluster mode's relay of alerts between nodes, on one service: what it fires goes to the relay once written, and
/// what another node fired reaches this node's StreamAlerts calls of the device — unless this node fires that
/// device's alerts itself.
@Suite(.timeLimit(.minutes(2)))
struct AlertRelayTests {
    final class RecordingRelay: AlertRelay {
        let relayed = Mutex<[(V1.Alert, DeviceID)]>([])
        /// Each outbox change: "device/symbol" and the alert's id, or "-" once the entry is gone.
        let outbox = Mutex<[String]>([])
        /// Each notice of a relayed alert delivered here: "device id".
        let deliveredHere = Mutex<[String]>([])
        func fired(_ alert: V1.Alert, device: DeviceID) { relayed.withLock { $0.append((alert, device)) } }
        func deliveredHere(_ alert: V1.Alert, device: DeviceID) {
            deliveredHere.withLock { $0.append("\(device.rawValue) \(alert.id)") }
        }
        func outboxChanged(_ entries: [(device: DeviceID, symbol: Symbol, alert: V1.Alert?)]) {
            outbox.withLock { $0 += entries.map { "\($0.device.rawValue)/\($0.symbol.rawValue) \($0.alert?.id ?? "-")" } }
        }
        /// Each registration handed over: "device token", or "device -" once unregistered.
        let registrations = Mutex<[String]>([])
        func registrationsChanged(_ entries: [(device: DeviceID, registration: V1.DeviceRegistration?)]) {
            registrations.withLock { $0 += entries.map { "\($0.device.rawValue) \($0.registration?.apnsToken ?? "-")" } }
        }
    }

    /// This node fires the alerts of `owned` only.
    struct OwnedGate: AlertGate {
        let owned: Set<String>
        func fires(for device: DeviceID) -> Bool { owned.contains(device.rawValue) }
    }

    /// This node fires `device`'s alerts only and relays through a new recording relay; BTC then crosses the
    /// device's rule (above 5000) once.
    static func crossHere(_ harness: AlertServiceHarness, device: String) async throws -> RecordingRelay {
        let relay = RecordingRelay()
        harness.service.alerts.fireOnly(where: OwnedGate(owned: [device]))
        harness.service.alerts.relay(through: relay)
        try await harness.save(device, ["BTC": rule(above: "5000")])
        harness.publish("BTC", "4900")
        harness.publish("BTC", "5012.3")
        return relay
    }

    @Test("an alert fired here goes to the relay; one relayed from elsewhere reaches this node's calls, not its outbox")
    func relayBothWays() async throws {
        try await withAlertService { harness in
            let relay = try await Self.crossHere(harness, device: "relay-here")
            #expect(await harness.waitForFired(1))
            #expect(await eventually { relay.relayed.withLock { $0.count } == 1 })
            let fired = try #require(relay.relayed.withLock { $0.first })
            #expect(fired.1.rawValue == "relay-here" && fired.0.deviceID == "relay-here")
            #expect(await eventually { relay.outbox.withLock { $0 } == ["relay-here/BTC \(fired.0.id)"] })

            // Another node fired for "relay-elsewhere" (its shard is not this node's): delivered to its call here.
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: "relay-elsewhere")
            #expect(await harness.waitForSubscribers(1))
            var elsewhere = fired.0
            elsewhere.deviceID = "relay-elsewhere"
            elsewhere.id = "from-another-node"
            harness.service.alerts.deliverRelayed(elsewhere)
            #expect(await recorder.waitForCount(1))
            #expect(recorder.alerts.map(\.id) == ["from-another-node"])
            // The owner hears of it, so its outbox entry can leave.
            #expect(await eventually { relay.deliveredHere.withLock { $0 } == ["relay-elsewhere from-another-node"] })
            // Only this node's own alert is in its outbox: the relayed one is the firing node's to keep.
            #expect(try harness.outbox().map(\.deviceID) == ["relay-here"])
            #expect(relay.relayed.withLock { $0.count } == 1, "a relayed alert is not relayed again")
            // Delivered to a call here, the owner's entry leaves its outbox, and the replicated copy hears of it.
            let own = AlertRecorder(client: client, device: "relay-here")
            #expect(await own.waitForCount(1))
            #expect(await eventually { relay.outbox.withLock { $0.last } == "relay-here/BTC -" })
        }
    }

    @Test("a taken-over shard's outbox entries restore into this node's outbox: a later call gets them pending")
    func restoredOutbox() async throws {
        try await withAlertService { harness in
            harness.service.alerts.fireOnly(where: OwnedGate(owned: ["was-away", "kept-newer"]))
            var away = V1.Alert()
            away.id = "pending-elsewhere"
            away.deviceID = "was-away"
            away.symbol = "BTC"
            away.timeMs = wallClockMs()
            // This node already holds a newer alert for kept-newer/ETH: the restored older one must not replace it.
            try await harness.save("kept-newer", ["ETH": rule(above: "3000")])
            harness.publish("ETH", "2900")
            harness.publish("ETH", "3010")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            var older = away
            older.id = "older-elsewhere"
            older.deviceID = "kept-newer"
            older.symbol = "ETH"
            older.timeMs = 1
            // Entries that name no valid device or symbol (a corrupt or foreign copy) are skipped.
            var noDevice = away
            noDevice.deviceID = "has space"
            noDevice.id = "no-device"
            var noSymbol = away
            noSymbol.symbol = "not a symbol"
            noSymbol.id = "no-symbol"
            harness.service.alerts.restoreOutbox([noDevice, away, noSymbol, older])
            #expect(await harness.waitForOutbox { $0.count == 2 })
            #expect(try harness.outbox().contains { $0.id == "pending-elsewhere" })
            #expect(try !harness.outbox().contains { $0.id == "older-elsewhere" })
            #expect(harness.stats.outboxRestored == 1)
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: "was-away")
            #expect(await recorder.waitForCount(1))
            #expect(recorder.alerts.map(\.id) == ["pending-elsewhere"])
        }
    }

    @Test("an alert fired here and delivered on another node leaves the outbox; a notice of an older one does not")
    func deliveredElsewhere() async throws {
        try await withAlertService { harness in
            let relay = try await Self.crossHere(harness, device: "away-here")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            let pending = try #require(try harness.outbox().first)
            // A notice naming another alert of the device (an older one, or a foreign id) leaves the entry alone;
            // one naming no valid device or symbol is dropped.
            var older = pending
            older.id = "older"
            var noDevice = pending
            noDevice.deviceID = "has space"
            var noSymbol = pending
            noSymbol.symbol = "not a symbol"
            for notice in [older, noDevice, noSymbol] { harness.service.alerts.deliveredElsewhere(notice) }
            harness.service.alerts.deliveredElsewhere(pending)
            #expect(await eventually { relay.outbox.withLock { $0.last } == "away-here/BTC -" })
            #expect(try harness.outbox().isEmpty)
            #expect(harness.stats.deliveredElsewhere == 1)
            // So the device's next call here is not sent it again as pending: a later alert is the first it gets.
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: "away-here")
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5020")
            #expect(await recorder.waitForCount(1))
            #expect(recorder.alerts.map(\.id) != [pending.id] && recorder.alerts.count == 1)
        }
    }

    @Test("a relayed alert of a device this node fires for is not delivered twice; one for no valid device is dropped")
    func ownDevicesAreNotDeliveredAgain() async throws {
        try await withAlertService { harness in
            harness.service.alerts.fireOnly(where: OwnedGate(owned: ["owned-here"]))
            let client = try await harness.connect()
            let owned = AlertRecorder(client: client, device: "owned-here")
            let other = AlertRecorder(client: client, device: "owned-elsewhere")
            #expect(await harness.waitForSubscribers(2))
            var alert = V1.Alert()
            alert.symbol = "BTC"
            // What another node sends is checked like a request: an alert for no valid device is dropped.
            for invalid in ["", "has space", String(repeating: "x", count: 10_000)] {
                alert.deviceID = invalid
                alert.id = "invalid"
                harness.service.alerts.deliverRelayed(alert)
            }
            alert.deviceID = "owned-here"
            alert.id = "skipped"
            harness.service.alerts.deliverRelayed(alert)
            alert.deviceID = "owned-elsewhere"
            alert.id = "delivered"
            harness.service.alerts.deliverRelayed(alert)
            // Both went through the alert thread in order and out on the same connection: once the second has
            // arrived, the first would have too.
            #expect(await other.waitForCount(1))
            #expect(other.alerts.map(\.id) == ["delivered"])
            #expect(owned.alerts.isEmpty)
        }
    }

    @Test("registrations made here go to the relay; one made elsewhere is applied here, queues its pushes, and is not relayed back")
    func registrationsBothWays() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            let relay = RecordingRelay()
            harness.service.alerts.relay(through: relay)
            try await harness.register("here-1", token: pushToken("61"))
            #expect(await eventually { relay.registrations.withLock { $0 } == ["here-1 \(pushToken("61"))"] })
            let connection = try await harness.connect()
            _ = try await connection.unary(V1.CoinWatch.unregisterDevice, V1.UnregisterDeviceRequest(deviceID: "here-1"))
            connection.close()
            #expect(await eventually { relay.registrations.withLock { $0.last } == "here-1 -" })

            // An alert waits in this node's outbox for a device that registered on another node.
            harness.service.alerts.fireOnly(where: OwnedGate(owned: ["elsewhere-1"]))
            try await harness.save("elsewhere-1", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForOutbox { $0.count == 1 })
            #expect(fake.received.isEmpty)
            let elsewhere = V1.DeviceRegistration(
                deviceID: "elsewhere-1", apnsToken: pushToken("62"), environment: .production, registeredAtMs: 1_000,
                status: .active)
            harness.service.alerts.applyReplicatedRegistration(try DeviceID(validating: "elsewhere-1"), elsewhere)
            #expect(await harness.waitForSends(fake, 1), "the owner did not send to a device registered elsewhere")
            #expect(fake.sent(0)?.deviceToken == pushToken("62"))
            #expect(try await harness.device("elsewhere-1").apnsToken == pushToken("62"))
            // Applied again (its own copy coming back) it changes nothing, and it never goes back to the relay.
            harness.service.alerts.applyReplicatedRegistration(try DeviceID(validating: "elsewhere-1"), elsewhere)
            harness.service.alerts.applyReplicatedRegistration(try DeviceID(validating: "elsewhere-1"), nil)
            #expect(await eventually { (try? await harness.device("elsewhere-1")) == nil })
            #expect(relay.registrations.withLock { $0.count } == 2)
        }
    }
}
