import CoinWatchProto
import Synchronization

/// Every device's committed settings in memory, split into shards each behind its own lock.
///
/// Event-loop threads read it on every `GetSettings`, so a read must neither wait for the writer for long nor
/// contend with other readers: with 64 shards two lookups rarely take the same lock, and each lock is held only
/// for one lookup and a copy of the response bytes. The writer thread is the only one that changes it, and only
/// with values already on stable storage. Keys are canonical device ids as UTF-8 bytes (`DeviceTable`): one
/// hash of the bytes picks the shard (high bits) and the bucket (low bits).
final class SettingsTable: Sendable {
    /// One lock and the settings whose device id hashes to it; each device's blob is its encoded
    /// `GetSettingsResponse`, made once when the settings were published, so reads are answered
    /// with those bytes and the hot path never runs the encoder.
    final class Shard: Sendable {
        let entries = Mutex<DeviceTable<V1.Settings>>(DeviceTable())
        /// Keeps neighbouring shards' lock words off each other's cache line, so uncontended readers of two
        /// shards do not slow each other down.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    static let shardCount = 64
    private let shards: [Shard]
    /// `shards`, unretained: event loops on every core look shards up for every read, and
    /// retaining a shared object from several cores bounces its reference count's cache
    /// line between them. `shards` keeps each one alive as long as the table.
    private let shardReferences: [Unmanaged<Shard>]
    /// The key of `DeviceTable.hash`, random per process.
    private let seed = UInt64.random(in: .min ... .max)

    init() {
        shards = (0..<Self.shardCount).map { _ in Shard() }
        shardReferences = shards.map { Unmanaged.passUnretained($0) }
    }

    /// Runs `body` with the table of the shard that `hash` picks, under its lock.
    private func withShard<Result>(for hash: UInt64, _ body: (inout DeviceTable<V1.Settings>) -> Result) -> Result {
        shardReferences[Int(truncatingIfNeeded: hash >> 58) & (Self.shardCount - 1)]._withUnsafeGuaranteedRef { shard in
            shard.entries.withLock { body(&$0) }
        }
    }

    private func withKey<Result>(_ key: String, _ body: (UnsafeRawBufferPointer, UInt64) -> Result) -> Result {
        var key = key
        return key.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            return body(bytes, DeviceTable<V1.Settings>.hash(bytes, seed: seed))
        }
    }

    /// The committed settings of the device with canonical id `key`.
    func get(_ key: String) -> V1.Settings? {
        withKey(key) { bytes, hash in
            withShard(for: hash) { $0.value(forKey: bytes, hash: hash) }
        }
    }

    /// The encoded `GetSettingsResponse` of the device with canonical id `key`.
    func encodedResponse(_ key: String) -> [UInt8]? {
        withKey(key) { bytes, hash in
            withShard(for: hash) { table in
                var response: [UInt8]?
                _ = table.withBlob(forKey: bytes, hash: hash) { response = Array($0) }
                return response
            }
        }
    }

    /// Calls `body` with the encoded `GetSettingsResponse` of the device whose canonical id is the UTF-8 `key`,
    /// under its shard's lock (so `body` must be short: a copy into an output buffer); false, without calling
    /// `body`, when the device has no settings.
    func withEncodedResponse(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let hash = DeviceTable<V1.Settings>.hash(key, seed: seed)
        return withShard(for: hash) { $0.withBlob(forKey: key, hash: hash, body) }
    }

    /// Replaces (or, with `nil`, removes) a device's settings. Writer thread only, after the value is durable.
    func set(_ key: String, _ value: V1.Settings?) {
        let response = value.map { V1.GetSettingsResponse(settings: $0).serializedBytes() }
        withKey(key) { bytes, hash in
            if let value, let response {
                response.withUnsafeBytes { blob in
                    withShard(for: hash) { $0.set(bytes, hash: hash, value: value, blob: blob) }
                }
            } else {
                withShard(for: hash) { $0.remove(bytes, hash: hash) }
            }
        }
    }

    /// A copy of every device's settings, in no particular order. Each shard is copied under its lock; a change
    /// published meanwhile may or may not be included (see `SettingsStore.observeChanges` for a consistent view).
    func all() -> [V1.Settings] {
        var result: [V1.Settings] = []
        for shard in shards {
            shard.entries.withLock { table in
                result.append(contentsOf: table.items.lazy.map(\.value))
            }
        }
        return result
    }

    /// How many devices have settings.
    var count: Int {
        shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } }
    }
}
