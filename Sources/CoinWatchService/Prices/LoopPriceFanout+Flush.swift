import CoinWatchModel
import CoinWatchRPC

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

    /// Sends a stream's dirty slots unless its connection is full or its interval has not elapsed; in those cases
    /// the slots stay dirty (latest value only) and a writable callback or an interval timer flushes them later.
    func flush(_ subscriber: PriceSubscriber) {
        guard !subscriber.isRemoved, !subscriber.dirtySlots.isEmpty else { return }
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
            now = PriceWire.monotonicNanos()
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
        let onlyChanges = subscriber.onlyChanges
        let checkMask = Self.writabilityCheckInterval - 1
        var sent = 0
        var taken = 0
        withUnsafeTemporaryAllocation(byteCount: PriceUpdateEncoding.maxSuffixBytes, alignment: 1) { suffix in
            while taken < dirty.count {
                // Stop once the connection is full (checked every few sends: each check costs a weak load, and
                // the overshoot is a few hundred bytes); the rest stay dirty and conflate.
                if sent & checkMask == checkMask && !stream.isWritable { break }
                let index = dirty[taken]
                taken += 1
                slots[index].isDirty = false
                let entry = slots[index].symbol
                guard let price = entry.price else { continue }
                if onlyChanges {
                    if slots[index].lastSent == price { continue }
                    slots[index].lastSent = price
                }
                sequence += 1
                let count = PriceUpdateEncoding.writeSequence(sequence, into: suffix)
                stream.send(shared: entry.payload(price), suffix: UnsafeRawBufferPointer(rebasing: suffix[..<count]))
                sent += 1
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
        deliveredUpdates &+= sent
        if sent > 0 && subscriber.intervalNanos > 0 {
            subscriber.nextSendNanos = now + subscriber.intervalNanos
        }
        if !subscriber.dirtySlots.isEmpty {
            park(subscriber)
        }
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
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }
}
