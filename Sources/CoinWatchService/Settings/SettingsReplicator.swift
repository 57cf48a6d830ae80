public import CoinWatchModel
public import CoinWatchProto
public import CoinWatchRPC

/// Where cluster mode keeps the settings of record (docs/SCALING.md, "Settings"): the settings writer hands it
/// each round's changed devices before it answers, and asks it for a device's replicated value when a conditional
/// write lost a race or a version check may rest on a stale copy.
///
/// Every call comes from the writer thread (`cw-settings`), which waits for it: the implementation may block on
/// the network (never an event loop waits for it). The replicator keeps, per device, the revision of the value
/// this node's copy rests on; a write is stored only if the device's revision is still that one, so two nodes that
/// save the same device from the same version cannot both succeed.
public protocol SettingsReplicator: Sendable {
    /// Stores each device's new record (`nil`: the settings were deleted), each on the condition that the device's
    /// revision is still the one this node's copy rests on; blocks until they are acknowledged. One outcome per
    /// write, in order.
    ///
    /// A write's `attached` record (the secret a device's first save issues) is stored first, where every node's
    /// credentials are, and only if no other node claimed the device (`CredentialReplicator.create`); when one
    /// did, the write is not stored and fails with `UNAUTHENTICATED`.
    func replicate(_ writes: [SettingsReplicaWrite]) -> [SettingsReplicaOutcome]

    /// The device's replicated value if it is newer than the one this node's copy rests on (and from now on rests
    /// on it), `.current` when it is not.
    func refresh(_ device: DeviceID) -> SettingsReplicaRefresh

    /// Whether a value another node stored at `revision` is newer than the one this node's copy rests on; when it
    /// is, this node's copy rests on it from now on. Called as the value is applied, in the writer's order.
    func accept(_ device: DeviceID, revision: UInt64) -> Bool
}

/// One device's state after a round, as the writer hands it to the replicator.
public struct SettingsReplicaWrite: Sendable {
    public let device: DeviceID
    /// The record as LevelDB stores it (`coinwatch.v1.Settings`); nil for a delete.
    public let record: [UInt8]?
    /// A credential record the save carries (`SaveCommand.attachedWrite`): the device's first secret.
    public let attached: (key: [UInt8], value: [UInt8])?
}

public enum SettingsReplicaOutcome: Sendable {
    /// Stored where every node reads it.
    case stored
    /// Another node wrote the device since this node's copy: refresh and run the requests again.
    case conflict
    /// Not stored (the replicas are unreachable); the requests fail with this error.
    case failed(RPCError)
}

public enum SettingsReplicaRefresh: Sendable {
    /// The replicated value is newer; `nil` settings: the device has none.
    case newer(V1.Settings?)
    case current
    case failed(RPCError)
}
