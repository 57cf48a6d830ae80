import CoinWatchProto
import Synchronization

/// Every device's committed settings in memory, split into shards each behind its own lock.
///
/// Event-loop threads read it on every `GetSettings`, so a read must neither wait for the writer for long nor
/// contend with other readers: with 64 shards two lookups rarely take the same lock, and each lock is held only
/// for one dictionary lookup and a copy-on-write copy of the value (a reference-count increment). The writer
/// thread is the only one that changes it, and only with values already on stable storage.
final class SettingsTable: Sendable {
    /// One lock and the settings whose device id hashes to it.
    final class Shard: Sendable {
        let entries = Mutex<[String: Entry]>([:])
        /// Keeps neighbouring shards' lock words off each other's cache line, so uncontended readers of two
        /// shards do not slow each other down.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// A device's settings and, encoded once when they were published, the
    /// `GetSettingsResponse` that carries them: reads are answered with these bytes,
    /// so the hot path never runs the encoder.
    struct Entry: Sendable {
        let settings: V1.Settings
        let encodedResponse: [UInt8]
    }

    static let shardCount = 64
    private let shards: [Shard] = (0..<SettingsTable.shardCount).map { _ in Shard() }

    private func shard(for key: String) -> Shard {
        // Hash values differ between processes; that is fine for a structure that lives in one.
        shards[key.hashValue & (Self.shardCount - 1)]
    }

    /// The committed settings of the device with canonical id `key`.
    func get(_ key: String) -> V1.Settings? {
        shard(for: key).entries.withLock { $0[key]?.settings }
    }

    /// The encoded `GetSettingsResponse` of the device with canonical id `key`.
    func encodedResponse(_ key: String) -> [UInt8]? {
        shard(for: key).entries.withLock { $0[key]?.encodedResponse }
    }

    /// Replaces (or, with `nil`, removes) a device's settings. Writer thread only, after the value is durable.
    func set(_ key: String, _ value: V1.Settings?) {
        let entry = value.map { Entry(settings: $0, encodedResponse: V1.GetSettingsResponse(settings: $0).serializedBytes()) }
        shard(for: key).entries.withLock { $0[key] = entry }
    }

    /// A copy of every device's settings, in no particular order. Each shard is copied under its lock; a change
    /// published meanwhile may or may not be included (see `SettingsStore.observeChanges` for a consistent view).
    func all() -> [V1.Settings] {
        var result: [V1.Settings] = []
        for shard in shards {
            shard.entries.withLock { entries in
                result.append(contentsOf: entries.values.lazy.map(\.settings))
            }
        }
        return result
    }

    /// How many devices have settings.
    var count: Int {
        shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } }
    }
}
