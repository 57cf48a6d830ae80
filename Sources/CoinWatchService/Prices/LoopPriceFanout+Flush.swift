import CoinWatchCore
import CoinWatchModel
import CoinWatchRPC
import Synchronization

extension LoopPriceFanout {
    /// Sends between two writability checks in a flush; a power of two.
    static let writabilityCheckInterval = 32

    /// Sends what each queued stream has dirty.
    func flushQueued() {
        swap(&flushList, &spareFlushList)
        for subscriber in spareFlushList {
            subscriber.isQueued = false
            flush(subscriber)
        }
        spareFlushList.removeAll(keepingCapacity: spareFlushList.count <= 4096)
    }

    /// Sends the ticks a drain queued for a stream, then its dirty slots, unless its connection is full or its
    /// interval has not elapsed; in those cases the ticks become dirty slots (latest value only) and a writable
    /// callback or an interval timer flushes them later.
    func flush(_ subscriber: PriceSubscriber) {
        guard !subscriber.isRemoved else { return }
        if !subscriber.pending.isEmpty {
            sendPending(subscriber)
        }
        guard !subscriber.dirtySlots.isEmpty else { return }
        let stream = subscriber.stream
        guard stream.isActive else {
            remove(subscriber)
            return
        }
        guard stream.isWritable else {
            park(subscriber)
            return
        }
        var now: Int64 = 0
        if subscriber.intervalNanos > 0 {
            now = MonotonicClock.nanoseconds()
            if now < subscriber.nextSendNanos {
                if subscriber.intervalTimer == nil {
                    subscriber.intervalTimer = loop.scheduleTimer(afterNanoseconds: subscriber.nextSendNanos - now) {
                        [self] in
                        subscriber.intervalTimer = nil
                        flush(subscriber)
                    }
                }
                return
            }
        }
        // Work on local copies (moved out, not copied): no exclusivity checks per slot on the hot path. Nothing in
        // `send` calls back into this subscriber (writability callbacks only run from the loop's own flush).
        var slots: [PriceSubscriber.Slot] = []
        var dirty: [Int] = []
        swap(&slots, &subscriber.slots)
        swap(&dirty, &subscriber.dirtySlots)
        var sequence = subscriber.sequence
        var snapshotRemaining = subscriber.snapshotRemaining
        let onlyChanges = subscriber.onlyChanges
        let checkMask = Self.writabilityCheckInterval - 1
        var sent = 0
        var taken = 0
        withUnsafeTemporaryAllocation(byteCount: PriceUpdateEncoding.maxSuffixBytes, alignment: 1) { suffix in
            stream.withMessageBatch { batch in
                while taken < dirty.count {
                    // Stop once the connection is full (checked every few sends, the overshoot is a few hundred
                    // bytes); the rest stay dirty and conflate.
                    if sent & checkMask == checkMask && !batch.isWritable { break }
                    let index = dirty[taken]
                    taken += 1
                    slots[index].isDirty = false
                    let entry = slots[index].symbol
                    guard let price = entry.price else { continue }
                    if onlyChanges {
                        if slots[index].lastSent == price && slots[index].lastSentStale == entry.isStale { continue }
                        slots[index].lastSent = price
                        slots[index].lastSentStale = entry.isStale
                    }
                    sequence += 1
                    let count: Int
                    if snapshotRemaining > 0 {
                        snapshotRemaining -= 1
                        count = PriceUpdateEncoding.writeSnapshotSuffix(sequence, isLast: snapshotRemaining == 0, into: suffix)
                    } else {
                        count = PriceUpdateEncoding.writeSequence(sequence, into: suffix)
                    }
                    entry.payload(price).withUnsafeBytes { payload in
                        batch.send(payload: payload, suffix: UnsafeRawBufferPointer(rebasing: suffix[..<count]))
                    }
                    sent += 1
                }
            }
        }
        if taken == dirty.count {
            dirty.removeAll(keepingCapacity: true)
        } else {
            dirty.removeFirst(taken)
        }
        swap(&slots, &subscriber.slots)
        swap(&dirty, &subscriber.dirtySlots)
        subscriber.sequence = sequence
        subscriber.snapshotRemaining = snapshotRemaining
        deliveredUpdates &+= sent
        if sent > 0 && subscriber.intervalNanos > 0 {
            subscriber.nextSendNanos = now + subscriber.intervalNanos
        }
        if !subscriber.dirtySlots.isEmpty {
            park(subscriber)
        }
    }

    /// Sends the ticks of the current drain queued for a stream that keeps up, each with its own price, in order.
    /// If the connection fills up on the way, the rest become dirty slots: the stream conflates from there on.
    private func sendPending(_ subscriber: PriceSubscriber) {
        let stream = subscriber.stream
        guard stream.isActive else {
            remove(subscriber)
            return
        }
        // Local copies (moved out, not copied), as in `flush`; `send` never calls back into this subscriber.
        var pending: [PriceSubscriber.PendingTick] = []
        var slots: [PriceSubscriber.Slot] = []
        var dirty: [Int] = []
        swap(&pending, &subscriber.pending)
        swap(&slots, &subscriber.slots)
        swap(&dirty, &subscriber.dirtySlots)
        var sequence = subscriber.sequence
        var sent = 0
        var taken = 0
        if stream.isWritable {
            stream.withMessageBatch { batch in
                (taken, sent) = send(pending, slots: &slots, sequence: &sequence,
                                     onlyChanges: subscriber.onlyChanges, to: batch)
            }
        }
        // The connection filled up: what is left waits as dirty slots, sent at their latest value.
        while taken < pending.count {
            let slot = Int(pending[taken].slot)
            taken += 1
            if !slots[slot].isDirty {
                slots[slot].isDirty = true
                dirty.append(slot)
            }
        }
        pending.removeAll(keepingCapacity: pending.capacity <= PriceSubscriber.retainedPendingCapacity)
        swap(&pending, &subscriber.pending)
        swap(&slots, &subscriber.slots)
        swap(&dirty, &subscriber.dirtySlots)
        subscriber.sequence = sequence
        deliveredUpdates &+= sent
    }

    /// Writes `pending` from the drain's log until done or the connection is full; returns how many ticks it
    /// took and how many of those it sent (`only_changes` skips some).
    private func send(
        _ pending: [PriceSubscriber.PendingTick], slots: inout [PriceSubscriber.Slot], sequence: inout UInt64,
        onlyChanges: Bool, to batch: ServerStream.MessageBatch
    ) -> (taken: Int, sent: Int) {
        let checkMask = Self.writabilityCheckInterval - 1
        var sent = 0
        var taken = 0
        withUnsafeTemporaryAllocation(byteCount: PriceUpdateEncoding.maxSuffixBytes, alignment: 1) { suffix in
            log.entries.withUnsafeBufferPointer { entries in
                while taken < pending.count {
                    if sent & checkMask == checkMask && !batch.isWritable { break }
                    let tick = pending[taken]
                    taken += 1
                    let entry = entries[Int(tick.entry)]
                    if onlyChanges {
                        let slot = Int(tick.slot)
                        if slots[slot].lastSent == entry.price && slots[slot].lastSentStale == entry.isStale { continue }
                        slots[slot].lastSent = entry.price
                        slots[slot].lastSentStale = entry.isStale
                    }
                    sequence += 1
                    let count = PriceUpdateEncoding.writeSequence(sequence, into: suffix)
                    batch.send(payload: log.payload(entry), suffix: UnsafeRawBufferPointer(rebasing: suffix[..<count]))
                    sent += 1
                }
            }
        }
        return (taken, sent)
    }

    /// The connection is above its high watermark: wait for it to drain, and end the stream if it does not
    /// drain in time.
    private func park(_ subscriber: PriceSubscriber) {
        if !subscriber.isWaitingForWritable {
            subscriber.isWaitingForWritable = true
            subscriber.stream.onWritable { [self] in
                subscriber.isWaitingForWritable = false
                if let timer = subscriber.stallTimer {
                    loop.cancelTimer(timer)
                    subscriber.stallTimer = nil
                }
                flush(subscriber)
            }
        }
        if subscriber.stallTimer == nil {
            subscriber.stallTimer = loop.scheduleTimer(after: slowSubscriberTimeout) { [self] in
                subscriber.stallTimer = nil
                guard !subscriber.isRemoved, subscriber.isWaitingForWritable else { return }
                endSlow(subscriber)
            }
        }
    }

    private func endSlow(_ subscriber: PriceSubscriber) {
        let message = "subscriber did not keep up for \(Self.describe(slowSubscriberTimeout)); prices were conflated "
            + "to the latest per symbol and the queue stayed full"
        subscriber.stream.finish(RPCError(code: .resourceExhausted, message: message))
        hub?.counters.slowSubscribersEnded.add(1, ordering: .relaxed)
        remove(subscriber)
    }

    /// `10 s`, `250 ms`.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds) s" : "\(duration.inMilliseconds) ms"
    }
}
