public import Synchronization

/// A block of counters with one writer each: the per-loop half of "per-loop counters, summed on scrape".
///
/// Every hot path that counts (calls, messages, deliveries) runs on one event loop, so each loop gets its own
/// block and is its cells' only writer. A cell is still an atomic, because the scrape reads it from another
/// thread, but a single writer needs no read-modify-write instruction: `add` is a relaxed load and a relaxed
/// store, plain moves on x86-64 and AArch64, and touches only the loop's own cache lines (the block is
/// allocated on its own lines, so two loops' blocks never share one). A cell written by more than one thread
/// would lose counts; use an `Atomic` with `add` for those.
public final class CounterCells: @unchecked Sendable {
    // @unchecked Sendable: the cells are atomics; the pointer and count never change after init, and the
    // memory lives until deinit.
    @usableFromInline let base: UnsafeMutablePointer<Atomic<UInt64>>
    public let count: Int

    /// Cache-line size assumed for padding (128 covers the adjacent-line prefetcher of x86-64).
    static let lineBytes = 128

    public init(count: Int) {
        precondition(count >= 0, "negative cell count")
        self.count = count
        let stride = MemoryLayout<Atomic<UInt64>>.stride
        let lines = max(1, (count * stride + Self.lineBytes - 1) / Self.lineBytes)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: lines * Self.lineBytes, alignment: Self.lineBytes)
        base = raw.bindMemory(to: Atomic<UInt64>.self, capacity: count)
        for index in 0..<count { (base + index).initialize(to: Atomic(0)) }
    }

    deinit {
        base.deinitialize(count: count)
        UnsafeMutableRawPointer(base).deallocate()
    }

    /// Adds `amount` to cell `index`. Only from the block's one writer thread.
    @inlinable @inline(__always)
    public func add(_ amount: UInt64, at index: Int) {
        let cell = base + index
        cell.pointee.store(cell.pointee.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    /// Adds 1 to cell `index`. Only from the block's one writer thread.
    @inlinable @inline(__always)
    public func increment(at index: Int) {
        add(1, at: index)
    }

    /// The value of cell `index`, from any thread.
    public func load(at index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "cell index out of range")
        return base[index].load(ordering: .relaxed)
    }

    /// A handle to one cell, for a writer that counts in a loop without holding the block.
    /// Valid only while this block is alive: keep the block referenced for as long as the handle is used.
    public func cell(at index: Int) -> CounterCell {
        precondition(index >= 0 && index < count, "cell index out of range")
        return CounterCell(pointer: base + index)
    }
}

/// One cell of a `CounterCells`, written by its block's one writer thread.
public struct CounterCell {
    @usableFromInline let pointer: UnsafeMutablePointer<Atomic<UInt64>>

    init(pointer: UnsafeMutablePointer<Atomic<UInt64>>) {
        self.pointer = pointer
    }

    @inlinable @inline(__always)
    public func add(_ amount: UInt64) {
        pointer.pointee.store(pointer.pointee.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    @inlinable @inline(__always)
    public func increment() { add(1) }
}
