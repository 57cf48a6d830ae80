/// A sorted set of ``IndexEntry`` kept as a list of sorted chunks ("sorted list of buckets").
///
/// Why this and not a sorted array or a tree: a tick removes a run of entries at one end of a key
/// range and re-inserts them into another index; settings changes insert and remove single entries.
/// A sorted array makes each insert O(n) — at a million entries, megabytes moved per settings change.
/// A chunk list finds the chunk by binary search over the chunks' last entries (O(log n/B)) and then
/// moves at most 2B entries inside one contiguous chunk: for B = 256, at most 12 KB of `memmove`.
/// Compared with a balanced tree or skip list it has no per-entry pointers or allocations, keeps
/// neighbouring keys in the same cache lines (a tick's entries are neighbours), builds from a sorted
/// array in O(n), and is simple enough to test step by step against a plain sorted array. Splitting a
/// full chunk inserts into the outer array (O(n/B)), but happens at most once per B inserts. Chunks
/// hold between 1 and 2B entries; a chunk that drops below B/4 is merged into a neighbour so the
/// outer array stays O(n/B) long under any pattern of removals.
///
/// Popping everything at or below a key (``popPrefix(through:into:)``) or at or above it
/// (``popSuffix(from:into:)``) costs O(log n/B + k + B) for k entries popped: whole chunks are taken
/// without looking inside them.
struct SortedChunkList {
    /// Non-empty sorted chunks; every entry of `chunks[i]` is below every entry of `chunks[i + 1]`.
    private(set) var chunks: [[IndexEntry]] = []
    /// `chunks[i].last`, kept beside the chunks so the chunk search touches one contiguous array.
    private var lasts: [IndexEntry] = []
    /// Target chunk size B.
    let chunkSize: Int
    private(set) var count = 0

    init(chunkSize: Int = 256) {
        self.chunkSize = max(chunkSize, 2)
    }

    /// Builds the list from entries in ascending order without duplicates, in O(n).
    init(sorted entries: [IndexEntry], chunkSize: Int = 256) {
        self.init(chunkSize: chunkSize)
        var start = 0
        while start < entries.count {
            let end = min(start + self.chunkSize, entries.count)
            chunks.append(Array(entries[start..<end]))
            lasts.append(entries[end - 1])
            start = end
        }
        count = entries.count
    }

    var isEmpty: Bool { count == 0 }

    /// Every entry in ascending order (for tests and snapshots).
    var elements: [IndexEntry] { chunks.flatMap { $0 } }

    /// The first chunk whose last entry is ≥ `entry`, or `chunks.count`.
    private func chunkIndex(for entry: IndexEntry) -> Int {
        var low = 0
        var high = lasts.count
        while low < high {
            let mid = (low + high) / 2
            if lasts[mid] < entry { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position in `chunk` whose entry is ≥ `entry`.
    private static func position(of entry: IndexEntry, in chunk: [IndexEntry]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if chunk[mid] < entry { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position in `chunk` whose key is > `key`.
    private static func position(afterKey key: Int128, in chunk: [IndexEntry]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if chunk[mid].key <= key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position in `chunk` whose key is ≥ `key`.
    private static func position(firstKeyAtLeast key: Int128, in chunk: [IndexEntry]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if chunk[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Inserts `entry`; returns `false` (and changes nothing) when it is already present.
    @discardableResult
    mutating func insert(_ entry: IndexEntry) -> Bool {
        guard !chunks.isEmpty else {
            chunks.append([entry])
            lasts.append(entry)
            count = 1
            return true
        }
        var index = chunkIndex(for: entry)
        if index == chunks.count { index -= 1 }
        let position = Self.position(of: entry, in: chunks[index])
        if position < chunks[index].count, chunks[index][position] == entry { return false }
        chunks[index].insert(entry, at: position)
        if position == chunks[index].count - 1 { lasts[index] = entry }
        count += 1
        if chunks[index].count > 2 * chunkSize { split(index) }
        return true
    }

    /// Inserts entries given in ascending order (entries already present are skipped).
    ///
    /// A tick moves a run of neighbouring entries from one index to the other, and they land next to
    /// each other, in one or a few chunks. Each chunk's share of the run is merged into it in one
    /// pass, so the cost is O(k + B) per chunk touched instead of a chunk shift per entry. A run so
    /// large that it would touch most chunks anyway (k · B/2 ≥ n) is merged with the whole list in
    /// one O(n + k) pass, so a price jump that fires half of the book costs a rebuild, not half a
    /// million separate inserts.
    mutating func insert(contentsOfSorted entries: [IndexEntry]) {
        guard !entries.isEmpty else { return }
        if entries.count >= 64, entries.count * (chunkSize / 2) >= count {
            mergeAll(entries)
            return
        }
        guard !chunks.isEmpty else {
            self = SortedChunkList(sorted: entries, chunkSize: chunkSize)
            return
        }
        var start = 0
        while start < entries.count {
            var index = chunkIndex(for: entries[start])
            if index == chunks.count { index -= 1 }
            // The entries that belong in this chunk: up to its last entry, or all for the last chunk.
            var end = start + 1
            if index == chunks.count - 1 {
                end = entries.count
            } else {
                while end < entries.count, entries[end] <= lasts[index] { end += 1 }
            }
            if end - start == 1 {
                insert(entries[start])
            } else {
                mergeIntoChunk(index, entries[start..<end])
            }
            start = end
        }
    }

    /// Merges a sorted run that belongs in chunk `index` into it, then splits it to size.
    private mutating func mergeIntoChunk(_ index: Int, _ run: ArraySlice<IndexEntry>) {
        let old = chunks[index]
        var merged: [IndexEntry] = []
        merged.reserveCapacity(old.count + run.count)
        var i = old.startIndex
        var j = run.startIndex
        while i < old.endIndex, j < run.endIndex {
            if old[i] < run[j] {
                merged.append(old[i])
                i += 1
            } else {
                if old[i] == run[j] { i += 1 }
                merged.append(run[j])
                j += 1
            }
        }
        merged.append(contentsOf: old[i...])
        merged.append(contentsOf: run[j...])
        count += merged.count - old.count
        guard merged.count > 2 * chunkSize else {
            chunks[index] = merged
            lasts[index] = merged[merged.count - 1]
            return
        }
        // Cut into pieces of about B entries each.
        let pieces = (merged.count + chunkSize - 1) / chunkSize
        var newChunks: [[IndexEntry]] = []
        var newLasts: [IndexEntry] = []
        for piece in 0..<pieces {
            let lower = piece * merged.count / pieces
            let upper = (piece + 1) * merged.count / pieces
            newChunks.append(Array(merged[lower..<upper]))
            newLasts.append(merged[upper - 1])
        }
        chunks.replaceSubrange(index...index, with: newChunks)
        lasts.replaceSubrange(index...index, with: newLasts)
    }

    /// Merges a sorted run with the whole list and rebuilds the chunks.
    private mutating func mergeAll(_ entries: [IndexEntry]) {
        var merged: [IndexEntry] = []
        merged.reserveCapacity(count + entries.count)
        var pending = entries.makeIterator()
        var next = pending.next()
        for chunk in chunks {
            for entry in chunk {
                while let candidate = next, candidate < entry {
                    merged.append(candidate)
                    next = pending.next()
                }
                if let candidate = next, candidate == entry { next = pending.next() }
                merged.append(entry)
            }
        }
        while let candidate = next {
            merged.append(candidate)
            next = pending.next()
        }
        self = SortedChunkList(sorted: merged, chunkSize: chunkSize)
    }

    /// Removes `entry`; returns `false` when it was not present.
    @discardableResult
    mutating func remove(_ entry: IndexEntry) -> Bool {
        let index = chunkIndex(for: entry)
        guard index < chunks.count else { return false }
        let position = Self.position(of: entry, in: chunks[index])
        guard position < chunks[index].count, chunks[index][position] == entry else { return false }
        chunks[index].remove(at: position)
        count -= 1
        repair(index)
        return true
    }

    /// Removes every entry whose key is ≤ `key`, appending them in ascending order to `out`.
    mutating func popPrefix(through key: Int128, into out: inout [IndexEntry]) {
        var whole = 0
        while whole < chunks.count, lasts[whole].key <= key { whole += 1 }
        for index in 0..<whole {
            out.append(contentsOf: chunks[index])
            count -= chunks[index].count
        }
        chunks.removeFirst(whole)
        lasts.removeFirst(whole)
        guard !chunks.isEmpty else { return }
        let cut = Self.position(afterKey: key, in: chunks[0])
        guard cut > 0 else { return }
        out.append(contentsOf: chunks[0][0..<cut])
        chunks[0].removeFirst(cut)
        count -= cut
        repair(0)
    }

    /// Removes every entry whose key is ≥ `key`, appending them in ascending order to `out`.
    mutating func popSuffix(from key: Int128, into out: inout [IndexEntry]) {
        // The first chunk holding a key ≥ `key`: every later chunk goes whole.
        var first = chunks.count
        while first > 0, lasts[first - 1].key >= key { first -= 1 }
        guard first < chunks.count else { return }
        let cut = Self.position(firstKeyAtLeast: key, in: chunks[first])
        out.append(contentsOf: chunks[first][cut...])
        count -= chunks[first].count - cut
        for index in (first + 1)..<chunks.count {
            out.append(contentsOf: chunks[index])
            count -= chunks[index].count
        }
        chunks.removeSubrange((first + 1)...)
        lasts.removeSubrange((first + 1)...)
        chunks[first].removeSubrange(cut...)
        repair(first)
    }

    /// Restores the chunk invariants at `index` after removals: drops an empty chunk, refreshes the
    /// chunk's last entry, and merges an underfull chunk into a neighbour.
    private mutating func repair(_ index: Int) {
        guard index < chunks.count else { return }
        if chunks[index].isEmpty {
            chunks.remove(at: index)
            lasts.remove(at: index)
            return
        }
        lasts[index] = chunks[index][chunks[index].count - 1]
        guard chunks[index].count < chunkSize / 4, chunks.count > 1 else { return }
        // Merge with the smaller neighbour, then split again if that overfilled it.
        let left: Int
        if index == 0 {
            left = 0
        } else if index == chunks.count - 1 {
            left = index - 1
        } else {
            left = chunks[index - 1].count <= chunks[index + 1].count ? index - 1 : index
        }
        let right = chunks.remove(at: left + 1)
        lasts.remove(at: left + 1)
        chunks[left].append(contentsOf: right)
        lasts[left] = chunks[left][chunks[left].count - 1]
        if chunks[left].count > 2 * chunkSize { split(left) }
    }

    private mutating func split(_ index: Int) {
        let half = chunks[index].count / 2
        let upper = Array(chunks[index][half...])
        chunks[index].removeSubrange(half...)
        lasts[index] = chunks[index][half - 1]
        chunks.insert(upper, at: index + 1)
        lasts.insert(upper[upper.count - 1], at: index + 1)
    }

    /// Checks every invariant; for tests.
    func isValid() -> Bool {
        guard chunks.count == lasts.count else { return false }
        var previous: IndexEntry?
        var total = 0
        for (index, chunk) in chunks.enumerated() {
            guard !chunk.isEmpty, chunk.count <= 2 * chunkSize, chunk.last == lasts[index] else { return false }
            for entry in chunk {
                if let previous, !(previous < entry) { return false }
                previous = entry
            }
            total += chunk.count
        }
        return total == count
    }
}
