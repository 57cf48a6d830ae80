/// A growable run of bytes that lives for one round of work and is then reset: the event loop's output of one
/// iteration, the price updates of one fan-out drain.
///
/// Writers append (or reserve, write in place, commit) and keep the returned offset; readers turn offsets back
/// into pointers. Offsets, not pointers, because growing moves the bytes. Resetting keeps the memory for the next
/// round unless a burst grew it past `retainedCapacity`, so a steady load allocates nothing and a spike does not
/// pin its peak for good. Not thread-safe: each arena has one owning thread.
public struct ByteArena {
    @usableFromInline private(set) var base: UnsafeMutableRawPointer?
    @usableFromInline private(set) var capacity = 0
    @usableFromInline var used = 0
    /// Bytes appended since the last reset.
    @inlinable public var count: Int { used }
    /// The first allocation's size.
    @usableFromInline let minimumCapacity: Int
    /// Capacity kept across resets; more is released by the next reset.
    public let retainedCapacity: Int

    public init(minimumCapacity: Int, retainedCapacity: Int) {
        precondition(minimumCapacity > 0 && retainedCapacity >= minimumCapacity, "arena capacities out of order")
        self.minimumCapacity = minimumCapacity
        self.retainedCapacity = retainedCapacity
    }

    /// Appends `bytes`; returns their offset.
    @inlinable
    public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let offset = reserve(bytes.count)
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (base! + offset).copyMemory(from: source, byteCount: bytes.count)
        }
        used += bytes.count
        return offset
    }

    /// Makes room for `length` more bytes and returns their offset; write them through `mutablePointer(at:)`, then
    /// `commit` how many were written.
    @inlinable
    public mutating func reserve(_ length: Int) -> Int {
        if used + length > capacity {
            grow(toHold: used + length)
        }
        return used
    }

    @inlinable
    public mutating func commit(_ length: Int) {
        precondition(used + length <= capacity, "arena commit past reserved space")
        used += length
    }

    /// Where the bytes at `offset` are; valid until the next `reserve`, `append` or `reset`.
    @inlinable @inline(__always)
    public func pointer(at offset: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(base!) + offset
    }

    @inlinable @inline(__always)
    public func mutablePointer(at offset: Int) -> UnsafeMutableRawPointer {
        base! + offset
    }

    /// The start of the memory, `nil` before the first append.
    @inlinable
    public var baseAddress: UnsafeRawPointer? {
        base.map { UnsafeRawPointer($0) }
    }

    /// Forgets every byte; releases the memory if a burst grew it past `retainedCapacity`.
    public mutating func reset() {
        used = 0
        if capacity > retainedCapacity {
            deallocate()
        }
    }

    /// Releases the memory (the owner is going away).
    public mutating func deallocate() {
        base?.deallocate()
        base = nil
        capacity = 0
        used = 0
    }

    @usableFromInline
    mutating func grow(toHold needed: Int) {
        var newCapacity = max(capacity * 2, minimumCapacity)
        while newCapacity < needed { newCapacity *= 2 }
        // allocate: uninitialized memory owned by this arena, freed by `deallocate` or replaced here.
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let base {
            newBase.copyMemory(from: base, byteCount: used)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }
}
