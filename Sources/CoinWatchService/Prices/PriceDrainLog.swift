import CoinWatchModel
import CoinWatchRPC

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
        var isStale: Bool
    }

    private(set) var entries: [Entry] = []
    /// The payloads, back to back. 64 KiB kept from one drain to the next; a larger burst is released by `reset`.
    private var bytes = ByteArena(minimumCapacity: 4096, retainedCapacity: 64 * 1024)

    /// Encodes a tick; returns its index.
    mutating func append(symbol: Symbol, price: ExactDecimal, timeMs: Int64, sources: UInt32, isStale: Bool) -> Int {
        let length = PriceUpdateEncoding.payloadSize(
            symbol: symbol, price: price, sourceTimeMs: timeMs, sources: sources, stale: isStale)
        let offset = bytes.reserve(length)
        let written = PriceUpdateEncoding.writePayload(
            symbol: symbol, price: price, sourceTimeMs: timeMs, sources: sources, stale: isStale,
            into: UnsafeMutableRawBufferPointer(start: bytes.mutablePointer(at: offset), count: length))
        precondition(written == length, "PriceUpdate size mismatch")
        bytes.commit(length)
        entries.append(Entry(offset: offset, length: length, price: price, isStale: isStale))
        return entries.count - 1
    }

    /// The bytes of `entry`, valid until the next `append` or `reset`.
    @inline(__always)
    func payload(_ entry: Entry) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes.pointer(at: entry.offset), count: entry.length)
    }

    /// Forgets every entry.
    mutating func reset() {
        entries.removeAll(keepingCapacity: entries.count <= 4096)
        bytes.reset()
    }

    /// Frees the buffer (the owner is going away).
    mutating func deallocate() {
        bytes.deallocate()
    }
}
