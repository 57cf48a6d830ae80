import CoinWatchModel
import Testing
@testable import CoinWatchService

@Suite("DeviceTable")
struct DeviceTableTests {
    static func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        Array(text.utf8).withUnsafeBytes(body)
    }

    static func hash(_ key: String, seed: UInt64) -> UInt64 {
        withBytes(key) { DeviceTable<Int>.hash($0, seed: seed) }
    }

    /// Reads everything a lookup can see of `key`: the value and the blob.
    static func lookup(_ table: borrowing DeviceTable<Int>, _ key: String, seed: UInt64) -> (Int, [UInt8])? {
        withBytes(key) { bytes in
            let hash = DeviceTable<Int>.hash(bytes, seed: seed)
            var blob: [UInt8]?
            _ = table.withBlob(forKey: bytes, hash: hash) { blob = Array($0) }
            guard let value = table.value(forKey: bytes, hash: hash), let blob else { return nil }
            return (value, blob)
        }
    }

    @Test("20,000 random sets, replacements and removals agree with a Dictionary, through growth and shrinking")
    func agreesWithDictionary() {
        for seed: UInt64 in [1, 0xDEAD_BEEF] {
            var random = SplitMix64(seed: seed)
            var table = DeviceTable<Int>()
            var reference: [String: (Int, [UInt8])] = [:]
            // Few distinct keys, so keys are often replaced and removed, and probe runs overlap.
            let keys = (0..<600).map { "device-\($0)" } + ["", "x", String(repeating: "k", count: 128)]
            for step in 0..<20_000 {
                let key = keys[Int(random.next() % UInt64(keys.count))]
                let hash = Self.hash(key, seed: seed)
                if random.next() % 3 == 0 {
                    Self.withBytes(key) { table.remove($0, hash: hash) }
                    reference[key] = nil
                } else {
                    let blob = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    Self.withBytes(key) { bytes in
                        blob.withUnsafeBytes { table.set(bytes, hash: hash, value: step, blob: $0) }
                    }
                    reference[key] = (step, blob)
                }
                if step % 1000 == 0 || step == 19_999 {
                    #expect(table.count == reference.count)
                    for key in keys {
                        let found = Self.lookup(table, key, seed: seed)
                        let expected = reference[key]
                        #expect(found?.0 == expected?.0 && found?.1 == expected?.1, "step \(step), key '\(key)'")
                    }
                }
            }
            #expect(Set(table.items.map(\.value)) == Set(reference.values.map(\.0)))
        }
    }

    @Test("keys that share a hash are told apart by their bytes")
    func collisions() {
        var table = DeviceTable<Int>()
        // Every key under one hash: a single probe run that removals must keep connected.
        let keys = (0..<50).map { "k\($0)" }
        for (index, key) in keys.enumerated() {
            Self.withBytes(key) { table.set($0, hash: 7, value: index, blob: $0) }
        }
        for index in stride(from: 0, to: 50, by: 3) {
            Self.withBytes(keys[index]) { table.remove($0, hash: 7) }
        }
        for (index, key) in keys.enumerated() {
            let value = Self.withBytes(key) { table.value(forKey: $0, hash: 7) }
            #expect(value == (index % 3 == 0 ? nil : index), "\(key)")
        }
        #expect(table.count == 50 - 17)
    }

    @Test("the hash depends on the seed and on every byte")
    func hashing() {
        #expect(Self.hash("device-1", seed: 1) != Self.hash("device-1", seed: 2))
        #expect(Self.hash("device-1", seed: 1) == Self.hash("device-1", seed: 1))
        let base = Array("3f2504e0-4f89-11d3-9a0c-0305e82c3301".utf8)
        var hashes: Set<UInt64> = []
        for index in base.indices {
            var changed = base
            changed[index] ^= 1
            hashes.insert(changed.withUnsafeBytes { DeviceTable<Int>.hash($0, seed: 3) })
        }
        #expect(hashes.count == base.count)
        #expect(!hashes.contains(base.withUnsafeBytes { DeviceTable<Int>.hash($0, seed: 3) }))
    }
}
