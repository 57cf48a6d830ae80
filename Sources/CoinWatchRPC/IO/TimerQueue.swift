/// A timer scheduled on an ``EventLoop``; pass it to ``EventLoop/cancelTimer(_:)``.
public struct TimerHandle: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32
}

/// A min-heap of deadlines with lazy cancellation, owned by one loop.
///
/// Cancelling only clears the timer's slot (O(1)); the heap entry becomes dead and is skipped when
/// it reaches the top. Deadlines of calls that finish early are the common case (schedule, then
/// cancel), so when dead entries outnumber live ones the heap is rebuilt, keeping memory
/// proportional to the live timers. Equal deadlines fire in scheduling order.
struct TimerQueue {
    private struct Entry {
        var deadline: Int64
        var sequence: UInt64
        var slot: UInt32
        var generation: UInt32

        @inline(__always)
        func firesBefore(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private struct Slot {
        var body: (() -> Void)?
        var generation: UInt32
    }

    private var heap: [Entry] = []
    private var slots: [Slot] = []
    private var freeSlots: [UInt32] = []
    private var nextSequence: UInt64 = 0
    private var deadEntries = 0

    /// Timers scheduled and neither fired nor cancelled.
    private(set) var count = 0

    /// Sequence number the next timer will get; timers scheduled while expired ones run have a
    /// sequence at or above a mark taken before, so a timer that reschedules itself with a zero
    /// delay cannot keep one loop iteration busy forever.
    var sequenceMark: UInt64 { nextSequence }

    mutating func schedule(deadline: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)].body = body
        } else {
            slot = UInt32(slots.count)
            slots.append(Slot(body: body, generation: 1))
        }
        let generation = slots[Int(slot)].generation
        push(Entry(deadline: deadline, sequence: nextSequence, slot: slot, generation: generation))
        nextSequence &+= 1
        count += 1
        return TimerHandle(slot: slot, generation: generation)
    }

    /// Cancels a pending timer; false if it already fired or was cancelled.
    @discardableResult
    mutating func cancel(_ handle: TimerHandle) -> Bool {
        guard Int(handle.slot) < slots.count, slots[Int(handle.slot)].generation == handle.generation,
              slots[Int(handle.slot)].body != nil else { return false }
        release(slot: handle.slot)
        deadEntries += 1
        if deadEntries > 64 && deadEntries > heap.count / 2 {
            compact()
        }
        return true
    }

    /// The deadline of the earliest live timer.
    mutating func earliestDeadline() -> Int64? {
        dropDeadTop()
        return heap.first?.deadline
    }

    /// Removes and returns the body of the earliest live timer if it is due at `now` and was
    /// scheduled before `sequenceLimit`.
    mutating func popExpired(now: Int64, sequenceLimit: UInt64) -> (() -> Void)? {
        dropDeadTop()
        guard let top = heap.first, top.deadline <= now, top.sequence < sequenceLimit else { return nil }
        popTop()
        let body = slots[Int(top.slot)].body
        release(slot: top.slot)
        return body
    }

    /// Drops every timer without running it (the loop is stopping).
    mutating func removeAll() {
        heap.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
        deadEntries = 0
        count = 0
    }

    // MARK: Heap

    private func isLive(_ entry: Entry) -> Bool {
        let slot = slots[Int(entry.slot)]
        return slot.generation == entry.generation && slot.body != nil
    }

    private mutating func release(slot: UInt32) {
        slots[Int(slot)].body = nil
        // Generations skip 0 so a wrapped counter never matches a zeroed handle.
        let next = slots[Int(slot)].generation &+ 1
        slots[Int(slot)].generation = next == 0 ? 1 : next
        freeSlots.append(slot)
        count -= 1
    }

    private mutating func dropDeadTop() {
        while let top = heap.first, !isLive(top) {
            popTop()
            deadEntries -= 1
        }
    }

    private mutating func compact() {
        let slots = self.slots
        heap.removeAll { entry in
            let slot = slots[Int(entry.slot)]
            return slot.generation != entry.generation || slot.body == nil
        }
        deadEntries = 0
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].firesBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = heap.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            let right = left + 1
            var smallest = left
            if right < count && heap[right].firesBefore(heap[left]) { smallest = right }
            guard heap[smallest].firesBefore(heap[parent]) else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
