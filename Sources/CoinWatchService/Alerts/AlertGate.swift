public import CoinWatchModel

/// Which node fires a device's alerts (cluster mode, docs/SCALING.md "Alerts"): every node evaluates every tick
/// and keeps every arm state, so a node that takes a shard over already has its states; only the node whose gate
/// says so puts a fired alert in the outbox and delivers it.
public protocol AlertGate: Sendable {
    /// Called on the alert thread for each fired alert; must be quick (an atomic read or a short lock, no network).
    func fires(for device: DeviceID) -> Bool
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
