extension IndexEntry {
    /// Sorts entries that are already in ascending device order, in O(n · d) for d varying key
    /// digits.
    ///
    /// Rebuilding an index after a load sorts up to a million entries per side, which with the
    /// comparison sort was most of the load time. This is a least-significant-digit radix sort on the
    /// 128-bit key in 16-bit digits. It skips digits that are the same in every key — thresholds
    /// near one price share their high digits, and decimal thresholds share low zero bits — so a
    /// typical book needs four or five passes. LSD radix sorting is stable, so entries with equal
    /// keys keep their input (device) order, which is exactly the tie-break `<` defines.
    static func radixSortByKey(_ entries: inout [IndexEntry]) {
        guard entries.count > 1 else { return }
        // The key as an unsigned 128-bit value with the same order: flip the sign bit.
        @inline(__always) func orderedBits(_ entry: IndexEntry) -> UInt128 {
            UInt128(UInt64(bitPattern: entry.high) ^ (1 << 63)) << 64 | UInt128(entry.low)
        }
        var allOnes: UInt128 = 0
        var allZeros: UInt128 = ~0
        for entry in entries {
            let bits = orderedBits(entry)
            allOnes |= bits
            allZeros &= bits
        }
        let varying = allOnes ^ allZeros
        var buffer = entries
        var counts = [Int](repeating: 0, count: 1 << 16)
        for digit in 0..<8 {
            let shift = UInt128(digit * 16)
            guard (varying >> shift) & 0xFFFF != 0 else { continue }
            for index in counts.indices { counts[index] = 0 }
            for entry in entries {
                counts[Int(truncatingIfNeeded: (orderedBits(entry) >> shift) & 0xFFFF)] += 1
            }
            var total = 0
            for index in counts.indices {
                let count = counts[index]
                counts[index] = total
                total += count
            }
            for entry in entries {
                let bucket = Int(truncatingIfNeeded: (orderedBits(entry) >> shift) & 0xFFFF)
                buffer[counts[bucket]] = entry
                counts[bucket] += 1
            }
            swap(&entries, &buffer)
        }
    }
}
