import CoinWatchModel
import CoinWatchProto
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
        func fired(_ alert: V1.Alert, device: DeviceID) { relayed.withLock { $0.append((alert, device)) } }
    }

    /// This node fires the alerts of `owned` only.
    struct OwnedGate: AlertGate {
        let owned: Set<String>
        func fires(for device: DeviceID) -> Bool { owned.contains(device.rawValue) }
    }

    @Test("an alert fired here goes to the relay; one relayed from elsewhere reaches this node's calls, not its outbox")
    func relayBothWays() async throws {
        try await withAlertService { harness in
            let relay = RecordingRelay()
            harness.service.alerts.fireOnly(where: OwnedGate(owned: ["relay-here"]))
            harness.service.alerts.relay(through: relay)
            try await harness.save("relay-here", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5012.3")
            #expect(await harness.waitForFired(1))
            #expect(await eventually { relay.relayed.withLock { $0.count } == 1 })
            let fired = try #require(relay.relayed.withLock { $0.first })
            #expect(fired.1.rawValue == "relay-here" && fired.0.deviceID == "relay-here")

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
            // Only this node's own alert is in its outbox: the relayed one is the firing node's to keep.
            #expect(try harness.outbox().map(\.deviceID) == ["relay-here"])
            #expect(relay.relayed.withLock { $0.count } == 1, "a relayed alert is not relayed again")
        }
    }

    @Test("a relayed alert of a device this node fires for is not delivered twice")
    func ownDevicesAreNotDeliveredAgain() async throws {
        try await withAlertService { harness in
            harness.service.alerts.fireOnly(where: OwnedGate(owned: ["owned-here"]))
            let client = try await harness.connect()
            let owned = AlertRecorder(client: client, device: "owned-here")
            let other = AlertRecorder(client: client, device: "owned-elsewhere")
            #expect(await harness.waitForSubscribers(2))
            var alert = V1.Alert()
            alert.symbol = "BTC"
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
}
