import CoinWatchCore

/// A hash table from device-id bytes to values, looked up straight from a request's bytes.
///
/// `Dictionary<String, _>` made every `GetSettings` build a `String`, hash it twice (shard,
/// then bucket) with SipHash, and copy the entry out, retaining buffers that every event
/// loop shares (their reference counts then bounce between cores). This table hashes the
/// bytes once with a keyed multiply-mix hash, which picks the shard as well, compares keys
/// in place, and lends each value's `blob` (the bytes readers want, e.g. an encoded
/// response) from memory it owns, so a lookup touches no reference count.
///
/// Layout: items sit densely in `items`, each with one allocation holding its key and then
/// its blob; `buckets` (open addressing, linear probing, at most half full) holds each
/// item's index, hash and storage. Removal moves the last item into the hole and closes the
/// probe run by backward shifting, so there are no tombstones.
struct DeviceTable<Value>: ~Copyable {
    struct Item {
        var value: Value
        let hash: UInt64
        /// The key's bytes, then the blob's; owned by the table.
        let storage: UnsafeMutableRawPointer
        let keyCount: Int
        let blobCount: Int

        var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: keyCount) }
        var blob: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage + keyCount, count: blobCount) }
    }

    /// A bucket repeats its item's hash and storage, so that a lookup reads the bucket and then
    /// the storage, and never `items`: each of those is a likely cache miss.
    private struct Bucket {
        /// Index in `items` plus one; 0 for an empty bucket.
        var slot: UInt32
        var keyCount: UInt32
        var hash: UInt64
        var storage: UnsafeMutableRawPointer?
        var blobCount: Int

        static var empty: Bucket { Bucket(slot: 0, keyCount: 0, hash: 0, storage: nil, blobCount: 0) }

        init(slot: UInt32, keyCount: UInt32, hash: UInt64, storage: UnsafeMutableRawPointer?, blobCount: Int) {
            self.slot = slot
            self.keyCount = keyCount
            self.hash = hash
            self.storage = storage
            self.blobCount = blobCount
        }

        init(slot: Int, item: Item) {
            self.init(slot: UInt32(slot), keyCount: UInt32(item.keyCount), hash: item.hash, storage: item.storage,
                      blobCount: item.blobCount)
        }

        var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: Int(keyCount)) }
        var blob: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: storage.map { $0 + Int(keyCount) }, count: blobCount)
        }
    }

    private(set) var items: [Item] = []
    private var buckets: [Bucket] = Array(repeating: .empty, count: 8)

    init() {}

    deinit {
        for item in items { item.storage.deallocate() }
    }

    var count: Int { items.count }

    /// The value stored under `key` (whose `DeviceTable.hash` is `hash`).
    func value(forKey key: UnsafeRawBufferPointer, hash: UInt64) -> Value? {
        find(key, hash: hash).item.map { items[$0].value }
    }

    /// Calls `body` with the blob stored under `key`; false, without calling it, when there is none.
    func withBlob(forKey key: UnsafeRawBufferPointer, hash: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let bucket = find(key, hash: hash)
        guard bucket.item != nil else { return false }
        body(buckets[bucket.bucket].blob)
        return true
    }

    /// Calls `body` with the value stored under `key`, which it may change, and the blob; nil, without calling it,
    /// when there is none.
    mutating func withValue<Result>(
        forKey key: UnsafeRawBufferPointer, hash: UInt64, _ body: (inout Value, UnsafeRawBufferPointer) -> Result
    ) -> Result? {
        guard let index = find(key, hash: hash).item else { return nil }
        let blob = items[index].blob
        return body(&items[index].value, blob)
    }

    /// Calls `body` with every item's key, value (which it may change) and blob, in no particular order.
    mutating func forEach(_ body: (UnsafeRawBufferPointer, inout Value, UnsafeRawBufferPointer) -> Void) {
        for index in items.indices {
            let item = items[index]
            body(item.key, &items[index].value, item.blob)
        }
    }

    /// Stores `value` and a copy of `blob` under `key`, replacing what was there.
    mutating func set(_ key: UnsafeRawBufferPointer, hash: UInt64, value: Value, blob: UnsafeRawBufferPointer) {
        set(key, hash: hash, value: value, blobCount: blob.count) { target in
            if !blob.isEmpty { target.baseAddress!.copyMemory(from: blob.baseAddress!, byteCount: blob.count) }
        }
    }

    /// Stores `value` and a blob of `blobCount` bytes that `writeBlob` fills in place under `key`, replacing what
    /// was there: a blob assembled from parts (a header and a stored record, say) is copied once.
    mutating func set(
        _ key: UnsafeRawBufferPointer, hash: UInt64, value: Value, blobCount: Int,
        writeBlob: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(1, key.count + blobCount), alignment: 8)
        if !key.isEmpty { storage.copyMemory(from: key.baseAddress!, byteCount: key.count) }
        writeBlob(UnsafeMutableRawBufferPointer(start: storage + key.count, count: blobCount))
        let item = Item(value: value, hash: hash, storage: storage, keyCount: key.count, blobCount: blobCount)
        let (bucket, found) = find(key, hash: hash)
        if let index = found {
            items[index].storage.deallocate()
            items[index] = item
            buckets[bucket] = Bucket(slot: index + 1, item: item)
            return
        }
        items.append(item)
        buckets[bucket] = Bucket(slot: items.count, item: item)
        if items.count * 2 > buckets.count { grow() }
    }

    /// Removes what is stored under `key`, if anything.
    mutating func remove(_ key: UnsafeRawBufferPointer, hash: UInt64) {
        let (bucket, found) = find(key, hash: hash)
        guard let index = found else { return }
        let mask = buckets.count - 1
        // Backward-shift deletion: pull later members of the probe run into the hole,
        // unless their home bucket lies cyclically in (hole, next].
        var hole = bucket
        var next = (hole + 1) & mask
        while buckets[next].slot != 0 {
            let home = Int(truncatingIfNeeded: buckets[next].hash) & mask
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = .empty
        items[index].storage.deallocate()
        // Keep `items` dense: the last item takes the removed one's place.
        let last = items.count - 1
        if index != last {
            let moved = items[last]
            let movedBucket = find(moved.key, hash: moved.hash).bucket
            items[index] = moved
            buckets[movedBucket].slot = UInt32(index + 1)
        }
        items.removeLast()
    }

    /// The bucket holding `key`, with its item's index, or the empty bucket where it would go.
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> (bucket: Int, item: Int?) {
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry.slot == 0 { return (bucket, nil) }
            if entry.hash == hash, entry.key.hasSameBytes(as: key) { return (bucket, Int(entry.slot) - 1) }
            bucket = (bucket + 1) & mask
        }
    }

    private mutating func grow() {
        var bigger = Array(repeating: Bucket.empty, count: buckets.count * 2)
        let mask = bigger.count - 1
        for entry in buckets where entry.slot != 0 {
            var bucket = Int(truncatingIfNeeded: entry.hash) & mask
            while bigger[bucket].slot != 0 { bucket = (bucket + 1) & mask }
            bigger[bucket] = entry
        }
        buckets = bigger
    }

    // MARK: Hashing

    /// A keyed hash of `bytes` (wyhash-style multiply-mix). The key is random per process, so
    /// ids chosen to collide in one process do not collide in another.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let count = bytes.count
        var state = seed ^ mix(UInt64(count) ^ 0xA076_1D64_78BD_642F, 0xE703_7ED1_A0B4_28DB)
        var index = 0
        while index + 8 <= count {
            state = mix(state ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self), 0x8EBC_6AF0_9C88_C6E3)
            index += 8
        }
        if index < count {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while index < count {
                tail |= UInt64(bytes[index]) << shift
                shift += 8
                index += 1
            }
            state = mix(state ^ tail ^ 0x5899_65CC_7537_4CC3, 0x1D8E_4E27_C47D_124F)
        }
        return mix(state, 0xA076_1D64_78BD_642F)
    }

    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }
}

// Sendable: the table owns `storage` exclusively (allocated in `set`, freed in `set`,
// `remove` and `deinit`) and is only reached through its shard's Mutex.
extension DeviceTable: @unchecked Sendable where Value: Sendable {}
