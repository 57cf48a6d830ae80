import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import Synchronization

extension CredentialStore {
    /// Makes `replicator` the credentials' store of record (cluster mode): from now on every key created or revoked
    /// and every device reset is stored there before this node's copy changes. A device's first secret rides with
    /// its first settings, which the settings writer replicates (`SettingsReplicator`).
    public func replicate(through replicator: any CredentialReplicator) {
        self.replicator.withLock { $0 = replicator }
    }

    /// Applies a record another node stored (cluster mode): `value` is the record under the store's `key`, nil or
    /// empty when it was removed. Memory and this node's copy follow it, and a credential that stops working (a
    /// revoked key, a device reset or given a new secret) moves `generation`, as a change made here does. The copy
    /// is written without a sync: the cluster's store keeps the record, and a start reads it from there again, so a
    /// node catching up on a million devices does not wait for the disk a million times.
    ///
    /// A revoked key stays revoked whatever arrives. A device being claimed here (`beginClaim`) takes the record as
    /// it is: the cluster's store decided which claim won, and `finishClaim` leaves a device it no longer holds
    /// pending alone.
    ///
    /// - Throws: `.corruption` for a record that does not decode (it is left out), or what this node's store reports.
    public func applyReplicated(key: [UInt8], value: [UInt8]?) throws(AuthError) {
        let value = value.flatMap { $0.isEmpty ? nil : $0 }
        try writeLock.withLock { _ throws(AuthError) in
            if key.starts(with: AuthStorage.keyPrefix) {
                // Keys are revoked, never removed: a key without a record is nothing to apply.
                guard let value else { return }
                let stored = try StoredKey(key: key, value: value)
                let current = keys.withLock { $0[stored.key.id] }
                if let current, (current.key.revoked && !stored.key.revoked) || current.encoded == value { return }
                try commitLocally(Self.batch(key, value), synced: false)
                keys.withLock { $0[stored.key.id] = stored }
                if let current, stored.key.revoked || current.secretHash != stored.secretHash { invalidated() }
            } else if key.starts(with: AuthStorage.devicePrefix) {
                let device = try DeviceSecretRecord.device(key: key)
                let shard = deviceShards[Self.shardIndex(device)]
                let previous = shard.table.withLock { $0[device.rawValue] }
                var next: DeviceState?
                if let value {
                    let (_, record) = try DeviceSecretRecord.decode(key: key, value: value)
                    if case .claimed(let hash)? = previous, hash == record.secretHash { return }
                    next = .claimed(record.secretHash)
                } else if previous == nil {
                    return
                }
                try commitLocally(Self.batch(key, value), synced: false)
                shard.table.withLock { $0[device.rawValue] = next }
                if case .claimed? = previous { invalidated() }
            } else {
                throw AuthError(code: .corruption, message: "record '\(AuthStorage.describe(key))' is not a credential")
            }
        }
    }

    /// Every key and device secret in this node's store, as records: what a node joining a cluster offers to the
    /// cluster's store, so that keys made before its first start (`coinwatchd keys create`) work on every node.
    public func storedRecords() throws(AuthError) -> [(key: [UInt8], value: [UInt8])] {
        guard let database else {
            return keys.withLock { $0.values.map { (AuthStorage.keyKey($0.key.id), $0.encoded) } }
        }
        let loaded = try AuthStorage.load(database)
        return loaded.keys.map { (AuthStorage.keyKey($0.key.id), $0.encoded) }
            + loaded.devices.map { device, record in (AuthStorage.deviceKey(device), record.encoded) }
    }

    private static func batch(_ key: [UInt8], _ value: [UInt8]?) -> WriteBatch {
        var batch = WriteBatch()
        if let value { batch.put(key, value) } else { batch.delete(key) }
        return batch
    }
}
