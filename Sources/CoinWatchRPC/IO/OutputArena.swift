/// Per-loop scratch memory for output produced during one loop iteration.
///
/// Small writes (headers, replies) are appended here instead of into per-connection buffers, and
/// connections queue `(offset, length)` references to them. At the end of the iteration the loop
/// flushes every connection; whatever the kernel did not take is copied out into the connection's
/// own storage ("spilled"), and the arena is reset. So an idle connection owns no output buffer,
/// and in the common case (the socket takes everything) bytes are copied exactly once.
///
/// References are offsets, not pointers, so growing (reallocating) the arena is safe.
/// Only the owning loop's thread touches it.
struct OutputArena {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private(set) var count = 0

    /// Capacity kept across iterations; a burst beyond it is released at the next reset.
    static let retainedCapacity = 1 << 20

    /// Appends `bytes`; returns their offset.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let offset = reserve(bytes.count)
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (base! + offset).copyMemory(from: source, byteCount: bytes.count)
        }
        count += bytes.count
        return offset
    }

    /// Makes room for `length` more bytes at `count` and returns that offset; the caller writes
    /// them through `base` and then calls `commit`.
    mutating func reserve(_ length: Int) -> Int {
        let needed = count + length
        if needed > capacity {
            var newCapacity = max(capacity * 2, 16 * 1024)
            while newCapacity < needed { newCapacity *= 2 }
            let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if let base {
                newBase.copyMemory(from: base, byteCount: count)
                base.deallocate()
            }
            base = newBase
            capacity = newCapacity
        }
        return count
    }

    mutating func commit(_ length: Int) {
        precondition(count + length <= capacity, "arena commit past reserved space")
        count += length
    }

    @inline(__always)
    func pointer(at offset: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(base!) + offset
    }

    /// Forgets all bytes (no connection references them any more).
    mutating func reset() {
        count = 0
        if capacity > Self.retainedCapacity {
            deallocate()
        }
    }

    mutating func deallocate() {
        base?.deallocate()
        base = nil
        capacity = 0
        count = 0
    }
}
