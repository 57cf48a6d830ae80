import CoinWatchAlertEngine
import CoinWatchProto
import Dispatch
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

    /// A device's `GetSettingsResponse`, which reads are answered with so the hot path never runs the encoder, and
    /// the settings it carries once something needed them as a message.
    ///
    /// Entries loaded from the store start with only the response (the stored record behind a short header, see
    /// `SettingsRecord`); the message is decoded on first use and kept. Entries published by the writer carry both.
    struct Entry: Sendable {
        let encodedResponse: [UInt8]
        /// Boxed so that an entry is two words: a million of them fill the shards' tables, and the table's size is
        /// what a load spends its time faulting in and rehashing.
        var decoded: Decoded?

        /// The decoded settings, shared by copies of the entry.
        final class Decoded: Sendable {
            let settings: V1.Settings

            init(_ settings: V1.Settings) {
                self.settings = settings
            }
        }

        /// An entry for a loaded record already checked by `SettingsRecord.scan`.
        init(canonicalRecord record: UnsafeRawBufferPointer) {
            encodedResponse = SettingsRecord.encodedResponse(wrapping: record)
            decoded = nil
        }

        init(settings: V1.Settings) {
            encodedResponse = V1.GetSettingsResponse(settings: settings).serializedBytes()
            decoded = Decoded(settings)
        }

        /// The settings, decoding the response once if needed.
        mutating func decodedSettings() -> V1.Settings? {
            if let decoded { return decoded.settings }
            // A canonical record always decodes (the scan accepts a subset of what the decoder accepts); should it
            // ever not, the device reads as having no settings rather than stopping the process.
            guard let settings = try? V1.GetSettingsResponse(serializedBytes: encodedResponse).settings else {
                return nil
            }
            decoded = Decoded(settings)
            return settings
        }
    }

    static let shardCount = 64
    private let shards: [Shard] = (0..<SettingsTable.shardCount).map { _ in Shard() }

    /// Every device's rules as read while loading, in key order, until the first change after the load makes them
    /// stale (`set` drops them): the alert service's start-up takes them instead of parsing every record again.
    let rulesAtLoad = Mutex<[RuleRecord]?>(nil)

    private func shard(for key: String) -> Shard {
        shards[Self.shardIndex(for: key)]
    }

    /// Which shard holds `key`. Hash values differ between processes; that is fine for a structure that lives in one.
    static func shardIndex(for key: String) -> Int {
        key.hashValue & (shardCount - 1)
    }

    /// The committed settings of the device with canonical id `key`.
    func get(_ key: String) -> V1.Settings? {
        shard(for: key).entries.withLock { entries in
            guard let index = entries.index(forKey: key) else { return nil }
            return entries.values[index].decodedSettings()
        }
    }

    /// The encoded `GetSettingsResponse` of the device with canonical id `key`.
    func encodedResponse(_ key: String) -> [UInt8]? {
        shard(for: key).entries.withLock { $0[key]?.encodedResponse }
    }

    /// Replaces (or, with `nil`, removes) a device's settings. Writer thread only, after the value is durable.
    func set(_ key: String, _ value: V1.Settings?) {
        let entry = value.map { Entry(settings: $0) }
        rulesAtLoad.withLock { $0 = nil }
        shard(for: key).entries.withLock { $0[key] = entry }
    }

    /// Adds a load's entries, gathered per shard (`shardIndex(for:)`) with distinct keys: each shard's table is sized
    /// once and filled under one lock, two shards at a time. Load only, before the table is shared.
    func fill(_ pending: [[(key: String, entry: Entry)]]) {
        precondition(pending.count == Self.shardCount, "fill takes one list per shard")
        let shards = self.shards
        DispatchQueue.concurrentPerform(iterations: Self.shardCount) { index in
            shards[index].entries.withLock { entries in
                entries.reserveCapacity(entries.count + pending[index].count)
                for (key, entry) in pending[index] {
                    entries[key] = entry
                }
            }
        }
    }

    /// Calls `body` with every device's canonical id and stored settings record (the bytes inside its encoded
    /// response), one shard at a time under that shard's lock, in no particular order: for bulk readers that parse
    /// records themselves instead of decoding every device's settings.
    func forEachRecord(_ body: (_ key: String, _ record: UnsafeRawBufferPointer) -> Void) {
        for shard in shards {
            shard.entries.withLock { entries in
                for (key, entry) in entries {
                    entry.encodedResponse.withUnsafeBytes { response in
                        if let record = SettingsRecord.record(inResponse: response) {
                            body(key, record)
                        }
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
            shard.entries.withLock { entries in
                var index = entries.values.startIndex
                while index != entries.values.endIndex {
                    if let settings = entries.values[index].decodedSettings() { result.append(settings) }
                    entries.values.formIndex(after: &index)
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
