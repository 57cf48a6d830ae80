/// A connection's pending output: an ordered list of byte ranges, each either in the loop's arena
/// (``EventLoop/arena``, written this iteration) or in a ``SharedBytes`` (a shared payload, or arena bytes
/// spilled because the socket did not take them).
///
/// Empty, it owns no memory beyond a small segment array, which is what keeps idle connections cheap.
struct OutboundQueue {
    struct Segment {
        /// nil: the range is in the loop's arena.
        var storage: SharedBytes?
        var start: Int
        var end: Int
    }

    private var segments: [Segment] = []
    private var head = 0
    /// Bytes queued and not yet written.
    private(set) var queuedBytes = 0
    /// Of those, bytes that live in the loop's arena and must be written or spilled this iteration.
    private(set) var arenaBytes = 0

    var isEmpty: Bool { head == segments.count }

    /// Queues arena bytes `[start, end)`, merging with the previous segment when contiguous (two
    /// small writes in a row become one iovec).
    mutating func appendArena(start: Int, end: Int) {
        guard end > start else { return }
        let length = end - start
        queuedBytes += length
        arenaBytes += length
        if head < segments.count, segments[segments.count - 1].storage == nil,
           segments[segments.count - 1].end == start {
            segments[segments.count - 1].end = end
        } else {
            segments.append(Segment(storage: nil, start: start, end: end))
        }
    }

    /// Queues `storage[start, end)` by reference.
    mutating func append(_ storage: SharedBytes, start: Int, end: Int) {
        guard end > start else { return }
        queuedBytes += end - start
        segments.append(Segment(storage: storage, start: start, end: end))
    }

    /// Fills `vectors` with the queued ranges, at most `vectors.capacity` of them.
    func fillVectors(_ vectors: IOVectorScratch, arena: UnsafeRawPointer?) -> (count: Int, bytes: Int) {
        var count = 0
        var bytes = 0
        var index = head
        let limit = vectors.capacity
        while index < segments.count && count < limit {
            let segment = segments[index]
            let base: UnsafeRawPointer
            if let storage = segment.storage {
                base = UnsafeRawPointer(storage.base)
            } else {
                base = arena!
            }
            vectors.set(count, base: base + segment.start, length: segment.end - segment.start)
            bytes += segment.end - segment.start
            count += 1
            index += 1
        }
        return (count, bytes)
    }

    /// Drops the first `written` bytes.
    mutating func consume(_ written: Int) {
        var remaining = written
        queuedBytes -= written
        while remaining > 0 {
            let length = segments[head].end - segments[head].start
            let isArena = segments[head].storage == nil
            if remaining >= length {
                if isArena { arenaBytes -= length }
                segments[head].storage = nil
                head += 1
                remaining -= length
            } else {
                if isArena { arenaBytes -= remaining }
                segments[head].start += remaining
                remaining = 0
            }
        }
        if head == segments.count {
            segments.removeAll(keepingCapacity: segments.capacity <= 16)
            head = 0
        } else if head >= 64 && head * 2 >= segments.count {
            segments.removeFirst(head)
            head = 0
        }
    }

    /// Copies the first `buffer.count` queued bytes (or all, if fewer) into `buffer` without consuming them;
    /// returns how many.
    func copyPrefix(into buffer: UnsafeMutableRawBufferPointer, arena: UnsafeRawPointer?) -> Int {
        var copied = 0
        var index = head
        while index < segments.count && copied < buffer.count {
            let segment = segments[index]
            let base = segment.storage.map { UnsafeRawPointer($0.base) } ?? arena!
            let length = min(segment.end - segment.start, buffer.count - copied)
            (buffer.baseAddress! + copied).copyMemory(from: base + segment.start, byteCount: length)
            copied += length
            index += 1
        }
        return copied
    }

    /// Copies every arena range into one new buffer owned by this queue, so the arena can be reset.
    /// Ranges that become contiguous in the new buffer are merged.
    mutating func spillArena(_ arena: ByteArena) {
        guard arenaBytes > 0 else { return }
        let spill = SharedBytes(uninitializedCount: arenaBytes)
        var offset = 0
        var out = head
        for index in head..<segments.count {
            var segment = segments[index]
            if segment.storage == nil {
                let length = segment.end - segment.start
                (spill.base + offset).copyMemory(from: arena.pointer(at: segment.start), byteCount: length)
                segment = Segment(storage: spill, start: offset, end: offset + length)
                offset += length
            }
            if out > head, segments[out - 1].storage === segment.storage, segments[out - 1].end == segment.start {
                segments[out - 1].end = segment.end
            } else {
                segments[out] = segment
                out += 1
            }
        }
        segments.removeSubrange(out..<segments.count)
        arenaBytes = 0
    }

    /// Drops everything (the connection closed).
    mutating func removeAll() {
        segments = []
        head = 0
        queuedBytes = 0
        arenaBytes = 0
    }
}
