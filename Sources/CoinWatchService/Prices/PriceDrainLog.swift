import CoinWatchModel

/// The `PriceUpdate` payloads (without sequence numbers) of the ticks one loop is draining, each encoded once.
///
/// Streams that keep up get every tick, each with its own price, so one drain needs one encoding per tick
/// rather than per symbol. They live in one reused buffer, referenced by index, so queueing a tick for a stream
/// costs neither an allocation nor reference counting; every stream's connection copies the bytes it sends.
/// Loop-confined (owned by a `LoopPriceFanout`); reset at the end of each drain.
struct PriceDrainLog {
    struct Entry {
        var offset: Int
        var length: Int
        var price: ExactDecimal
    }

    private(set) var entries: [Entry] = []
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var count = 0

    /// Capacity kept from one drain to the next; a larger burst is released by `reset`.
    static let retainedCapacity = 64 * 1024

    /// Encodes a tick; returns its index.
    mutating func append(symbol: Symbol, price: ExactDecimal, timeMs: Int64) -> Int {
        let length = PriceUpdateEncoding.payloadSize(symbol: symbol, price: price, sourceTimeMs: timeMs)
        reserve(length)
        let written = PriceUpdateEncoding.writePayload(
            symbol: symbol, price: price, sourceTimeMs: timeMs,
            into: UnsafeMutableRawBufferPointer(start: base! + count, count: length))
        precondition(written == length, "PriceUpdate size mismatch")
        entries.append(Entry(offset: count, length: length, price: price))
        count += length
        return entries.count - 1
    }

    /// The bytes of `entry`, valid until the next `append` or `reset`.
    @inline(__always)
    func payload(_ entry: Entry) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base! + entry.offset, count: entry.length)
    }

    /// Forgets every entry.
    mutating func reset() {
        count = 0
        entries.removeAll(keepingCapacity: entries.count <= 4096)
        if capacity > Self.retainedCapacity {
            deallocate()
        }
    }

    /// Frees the buffer (the owner is going away, or a burst is over).
    mutating func deallocate() {
        base?.deallocate()
        base = nil
        capacity = 0
        count = 0
    }

    private mutating func reserve(_ length: Int) {
        let needed = count + length
        guard needed > capacity else { return }
        var newCapacity = max(capacity * 2, 4096)
        while newCapacity < needed { newCapacity *= 2 }
        // allocate: uninitialized memory owned by this log, freed by `deallocate` (or replaced here).
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let base {
            newBase.copyMemory(from: base, byteCount: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }
}
