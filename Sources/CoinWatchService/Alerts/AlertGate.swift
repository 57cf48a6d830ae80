public import CoinWatchModel
public import CoinWatchProto

/// Which node fires a device's alerts (cluster mode, docs/SCALING.md "Alerts"): every node evaluates every tick
/// and keeps every arm state, so a node that takes a shard over already has its states; only the node whose gate
/// says so puts a fired alert in the outbox and delivers it.
public protocol AlertGate: Sendable {
    /// Called on the alert thread for each fired alert; must be quick (an atomic read or a short lock, no network).
    func fires(for device: DeviceID) -> Bool
}

/// Carries the alerts this node fires to the other nodes (cluster mode, docs/SCALING.md "StreamAlerts on any
/// node"): a client may follow a device's alerts on any node, not only on the one owning the device's shard. The
/// other nodes deliver a relayed alert to their own `StreamAlerts` calls of the device
/// (`AlertService.deliverRelayed`) and tell the owner, whose outbox entry then leaves as if its own call had taken
/// it (`AlertService.deliveredElsewhere`); the outbox and APNs stay the owner's.
public protocol AlertRelay: Sendable {
    /// Called on an event loop once an alert another node fired (relayed here) was written to one of this node's
    /// StreamAlerts calls, for the firing node; must not block (queue it).
    func deliveredHere(_ alert: V1.Alert, device: DeviceID)

    /// Called on the alert thread with each alert this node fired, once its round is written; must not block
    /// (queue it).
    func fired(_ alert: V1.Alert, device: DeviceID)

    /// Called on the alert thread with the outbox entries a written round changed on this node (an alert put, or
    /// nil: the entry is gone), so a node that takes the devices' shard over can restore them
    /// (`AlertService.restoreOutbox`); must not block.
    func outboxChanged(_ entries: [(device: DeviceID, symbol: Symbol, alert: V1.Alert?)])

    /// Called on the alert thread with the registrations a written round changed through RegisterDevice or
    /// UnregisterDevice on this node (nil: unregistered), so the node owning each device's shard, which sends its
    /// pushes, has them (`AlertService.applyReplicatedRegistration`); must not block.
    func registrationsChanged(_ entries: [(device: DeviceID, registration: V1.DeviceRegistration?)])
}

/// Devices hash onto a fixed number of shards; a shard is the unit of alert ownership between nodes.
public enum AlertShards {
    public static let count = 64

    /// `fnv1a64(canonical device id) mod 64`: the same on every node and every version.
    public static func shard(of device: DeviceID) -> Int {
        Int(hash(device.rawValue) % UInt64(count))
    }

    /// FNV-1a, 64 bits: stable across processes and versions (Swift's `Hasher` is seeded per process).
    public static func hash(_ text: String) -> UInt64 {
        AlertNotification.fnv1a(text)
    }
}
