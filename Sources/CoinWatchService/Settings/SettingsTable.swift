import CoinWatchProto
import Synchronization

/// Every device's committed settings in memory, split into shards each behind its own lock.
///
/// Event-loop threads read it on every `GetSettings`, so a read must neither wait for the writer for long nor
/// contend with other readers: with 64 shards two lookups rarely take the same lock, and each lock is held only
/// for one lookup and a copy of the response bytes. The writer thread is the only one that changes it, and only
/// with values already on stable storage. Keys are canonical device ids as UTF-8 bytes (`DeviceTable`): one
/// hash of the bytes picks the shard (high bits) and the bucket (low bits).
///
/// Each device's blob is its encoded `GetSettingsResponse`, so reads are answered with those bytes and the hot
/// path never runs the encoder. Its value is the decoded settings once something needed them as a message:
/// entries loaded from the store start with only the response (the stored record behind a short header, see
/// `SettingsRecord`) and are decoded on first use; entries published by the writer carry both.
final class SettingsTable: Sendable {
    /// A device's settings as a message, boxed so that a table item stays small: a million of them are what a
    /// start-up spends its time allocating and faulting in.
    final class Decoded: Sendable {
        let settings: V1.Settings

        init(_ settings: V1.Settings) {
            self.settings = settings
        }
    }

    /// One lock and the settings whose device id hashes to it.
    final class Shard: Sendable {
        let entries = Mutex<DeviceTable<Decoded?>>(DeviceTable())
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

    /// Whether the writer has published a change since the load (set under its observers' lock): until it has, what
    /// a consumer gathered while the store loaded (the `onLoadedRule` hook) is still every device's current rules.
    let changedSinceLoad = Atomic<Bool>(false)

    init() {
        shards = (0..<Self.shardCount).map { _ in Shard() }
        shardReferences = shards.map { Unmanaged.passUnretained($0) }
    }

    /// Runs `body` with the table of the shard that `hash` picks, under its lock.
    private func withShard<Result>(for hash: UInt64, _ body: (inout DeviceTable<Decoded?>) -> Result) -> Result {
        shardReferences[Int(truncatingIfNeeded: hash >> 58) & (Self.shardCount - 1)]._withUnsafeGuaranteedRef { shard in
            shard.entries.withLock { body(&$0) }
        }
    }

    private func withKey<Result>(_ key: String, _ body: (UnsafeRawBufferPointer, UInt64) -> Result) -> Result {
        var key = key
        return key.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            return body(bytes, DeviceTable<Decoded?>.hash(bytes, seed: seed))
        }
    }

    /// The settings of an entry, decoding its response once if needed.
    private static func settings(_ decoded: inout Decoded?, response: UnsafeRawBufferPointer) -> V1.Settings? {
        if let decoded { return decoded.settings }
        // A canonical record always decodes (the load's scan accepts a subset of what the decoder accepts); should
        // it ever not, the device reads as having no settings rather than stopping the process.
        guard let settings = try? V1.GetSettingsResponse(serializedBytes: response).settings else { return nil }
        decoded = Decoded(settings)
        return settings
    }

    /// The committed settings of the device with canonical id `key`.
    func get(_ key: String) -> V1.Settings? {
        withKey(key) { bytes, hash in
            withShard(for: hash) { table in
                table.withValue(forKey: bytes, hash: hash) { Self.settings(&$0, response: $1) } ?? nil
            }
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
        let hash = DeviceTable<Decoded?>.hash(key, seed: seed)
        return withShard(for: hash) { $0.withBlob(forKey: key, hash: hash, body) }
    }

    /// Replaces (or, with `nil`, removes) a device's settings. Writer thread only, after the value is durable.
    ///
    /// - Parameter record: `value`'s encoding, when the caller has it (the writer just stored it): the response is
    ///   then that record behind a short header, the same bytes encoding the response would give, without encoding.
    func set(_ key: String, _ value: V1.Settings?, record: [UInt8]? = nil) {
        guard let value else {
            withKey(key) { bytes, hash in withShard(for: hash) { $0.remove(bytes, hash: hash) } }
            return
        }
        let record = record ?? value.serializedBytes()
        record.withUnsafeBytes { record in
            let size = SettingsRecord.responseSize(wrapping: record)
            withKey(key) { bytes, hash in
                withShard(for: hash) { table in
                    table.set(bytes, hash: hash, value: Decoded(value), blobCount: size) { blob in
                        _ = SettingsRecord.writeResponse(wrapping: record, into: blob)
                    }
                }
            }
        }
    }

    /// Adds a device loaded from the store whose record `SettingsRecord.scan` accepted: its response is the record
    /// behind a short header, written straight into the table, and nothing is decoded. Load only.
    func insertLoaded(_ key: UnsafeRawBufferPointer, canonicalRecord record: UnsafeRawBufferPointer) {
        let hash = DeviceTable<Decoded?>.hash(key, seed: seed)
        let size = SettingsRecord.responseSize(wrapping: record)
        withShard(for: hash) { table in
            table.set(key, hash: hash, value: nil, blobCount: size) { blob in
                _ = SettingsRecord.writeResponse(wrapping: record, into: blob)
            }
        }
    }

    /// Calls `body` with every device's canonical id and stored settings record (the bytes inside its encoded
    /// response), one shard at a time under that shard's lock, in no particular order: for bulk readers that parse
    /// records themselves instead of decoding every device's settings.
    func forEachRecord(_ body: (_ key: String, _ record: UnsafeRawBufferPointer) -> Void) {
        for shard in shards {
            shard.entries.withLock { table in
                table.forEach { key, _, response in
                    if let record = SettingsRecord.record(inResponse: response) {
                        body(String(decoding: key, as: UTF8.self), record)
                    }
                }
            }
        }
    }

    /// A copy of every device's settings, in no particular order. Each shard is copied under its lock; a change
    /// published meanwhile may or may not be included (see `SettingsStore.observeChanges` for a consistent view).
    func all() -> [V1.Settings] {
        var result: [V1.Settings] = []
        for shard in shards {
            shard.entries.withLock { table in
                table.forEach { _, decoded, response in
                    if let settings = Self.settings(&decoded, response: response) { result.append(settings) }
                }
            }
        }
        return result
    }

    /// How many devices have settings.
    var count: Int {
        shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } }
    }
}
