import CoinWatchModel
import CoinWatchRPC
import Synchronization

/// The streams of one event loop and the loop's copy of the latest prices.
///
/// A publish reaches a loop through its mailbox (the ticks in publish order, bounded) and at most one pending job,
/// never one job per stream or per tick. The job walks the ticks once: it updates the loop's latest value per
/// symbol, encodes each tick once into the drain's log, and queues it for every stream that follows the symbol and
/// keeps up, or marks the symbol's slot dirty in a stream that does not (conflation). Then it flushes each stream
/// once: its ticks leave as consecutive frames in the loop's output arena, copied from the log with only the frame
/// envelope and the sequence-number suffix differing, so one `sendmsg` per connection carries the whole drain.
/// Everything here runs on `loop`, except `post`, which publishers call under the mailbox lock.
final class LoopPriceFanout: @unchecked Sendable {
    // @unchecked Sendable: `loop`, `slowSubscriberTimeout`, `mailboxLimit` and `hub` are set in init and never
    // change (`hub` is a weak reference, itself thread-safe); `mailbox` is a Mutex; every other stored property
    // (including the drain's `log`) is read and written only on `loop`'s thread: publishers touch only `mailbox`
    // and reach the rest through `loop.execute`, and stream handlers run on the loop.
    let loop: EventLoop
    let slowSubscriberTimeout: Duration
    /// Ticks the mailbox holds before it conflates (`Configuration.maxQueuedTicksPerLoop`).
    let mailboxLimit: Int
    weak var hub: PriceHub?
    let mailbox = Mutex(FanoutMailbox())
    /// The mailbox's contents while the loop applies them (swapped, so neither side reallocates).
    private var draining: [MailboxTick] = []
    /// The encoded ticks of the current drain.
    var log = PriceDrainLog()

    /// The latest price per symbol as this loop has seen it, plus symbols streams asked for before any price.
    private(set) var table: [Symbol: LoopSymbol] = [:]
    private(set) var subscribers: [PriceSubscriber] = []
    /// Streams that follow every symbol; they get a slot for each symbol that appears.
    private var wildcards: [PriceSubscriber] = []
    /// Streams with dirty slots waiting for the flush at the end of the current drain.
    var flushList: [PriceSubscriber] = []
    var spareFlushList: [PriceSubscriber] = []
    private(set) var isClosed = false
    /// Messages sent by this loop's streams.
    var deliveredUpdates = 0

    init(loop: EventLoop, hub: PriceHub, slowSubscriberTimeout: Duration, mailboxLimit: Int) {
        self.loop = loop
        self.hub = hub
        self.slowSubscriberTimeout = slowSubscriberTimeout
        self.mailboxLimit = mailboxLimit
    }

    deinit {
        log.deallocate()
    }

    // MARK: Publishing

    /// Adds a publish to the mailbox and wakes the loop unless a drain is already pending. Any thread.
    ///
    /// - Parameter publishingLoop: the event loop this is called on, if any (and not `loop`): the wake-up is
    ///   then a job on that loop, run after the events it is handling now, so that publishes read in one
    ///   round reach this loop as one drain, for the cost of one wake-up.
    func post(_ ticks: [PriceTick], version: UInt64, deferringWakeTo publishingLoop: EventLoop? = nil) {
        let limit = mailboxLimit
        let wake = mailbox.withLock { box -> Bool in
            box.append(ticks, version: version, limit: limit)
            if box.isScheduled { return false }
            box.isScheduled = true
            return true
        }
        guard wake else { return }
        // A publishing loop that is stopping refuses the job: wake this loop now instead.
        if let publishingLoop, publishingLoop !== loop,
           publishingLoop.execute({ [self] in loop.execute { [self] in drainMailbox() } }) {
            return
        }
        loop.execute { [self] in drainMailbox() }
    }

    /// The loop's job: takes everything published since the last drain, queues each tick for the streams that
    /// keep up and marks the slots of the others dirty, then flushes every stream it touched once.
    func drainMailbox() {
        mailbox.withLock { box in
            box.isScheduled = false
            box.take(into: &draining)
        }
        guard !isClosed else {
            draining.removeAll(keepingCapacity: true)
            return
        }
        for tick in draining {
            let entry = table[tick.symbol] ?? addSymbol(tick.symbol)
            // A stream's snapshot may already have brought this loop a newer value (see `subscribe`).
            if entry.price == nil || tick.version >= entry.version {
                entry.update(
                    price: tick.price, timeMs: tick.timeMs, version: tick.version, sources: tick.sources,
                    isStale: tick.isStale)
            }
            var logIndex: Int32 = -1
            for interest in entry.interest {
                interest.subscriberReference._withUnsafeGuaranteedRef { subscriber in
                    // The stream's snapshot already holds this value.
                    guard subscriber.startVersion < tick.version else { return }
                    if subscriber.takesEveryTick {
                        if logIndex < 0 {
                            logIndex = Int32(log.append(
                                symbol: tick.symbol, price: tick.price, timeMs: tick.timeMs, sources: tick.sources,
                                isStale: tick.isStale))
                        }
                        subscriber.pending.append(.init(slot: Int32(interest.slot), entry: logIndex))
                        if !subscriber.isQueued {
                            subscriber.isQueued = true
                            flushList.append(subscriber)
                        }
                    } else if subscriber.markDirty(interest.slot) {
                        subscriber.isQueued = true
                        flushList.append(subscriber)
                    }
                }
            }
        }
        draining.removeAll(keepingCapacity: draining.count <= mailboxLimit)
        flushQueued()
        log.reset()
    }

    // MARK: Streams

    /// Starts a stream from a snapshot taken under the hub's lock at hub version `version`.
    func subscribe(
        _ stream: ServerStream, _ subscription: StreamPricesSubscription,
        snapshot: [(Symbol, LatestPrice)], version: UInt64
    ) {
        // This loop may have missed batches while it had no streams (the hub skips such loops), and batches
        // included in the snapshot may still be on their way: bring the table up to the snapshot first.
        for (symbol, latest) in snapshot {
            let entry = table[symbol] ?? addSymbol(symbol)
            if entry.price == nil || latest.version > entry.version {
                entry.update(
                    price: latest.price, timeMs: latest.timeMs, version: latest.version, sources: latest.sources,
                    isStale: latest.isStale)
            }
        }
        let subscriber = PriceSubscriber(stream: stream, startVersion: version, subscription: subscription)
        if subscription.isWildcard {
            for entry in table.values.sorted(by: { $0.symbol < $1.symbol }) {
                addSlot(subscriber, entry)
            }
            subscriber.wildcardIndex = wildcards.count
            wildcards.append(subscriber)
        } else {
            for symbol in subscription.symbols {
                addSlot(subscriber, table[symbol] ?? addSymbol(symbol))
            }
        }
        subscriber.subscriberIndex = subscribers.count
        subscribers.append(subscriber)
        // Snapshot first: every followed symbol with a price is dirty now, in symbol order. Until they are sent,
        // later ticks for these symbols conflate into them and other symbols' queue behind them (a stream with
        // dirty slots takes no tick as it comes), so they are the stream's first messages.
        for index in subscriber.slots.indices where subscriber.slots[index].symbol.price != nil {
            _ = subscriber.markDirty(index)
        }
        subscriber.snapshotRemaining = subscriber.dirtySlots.count
        stream.onTerminate { [self] _ in remove(subscriber) }
        flush(subscriber)
    }

    /// Forgets a stream that ended (cancel, deadline, disconnect, shutdown, or ended by the hub).
    func remove(_ subscriber: PriceSubscriber) {
        guard !subscriber.isRemoved else { return }
        subscriber.isRemoved = true
        if let timer = subscriber.intervalTimer {
            loop.cancelTimer(timer)
            subscriber.intervalTimer = nil
        }
        if let timer = subscriber.stallTimer {
            loop.cancelTimer(timer)
            subscriber.stallTimer = nil
        }
        Self.swapRemove(subscriber, from: &subscribers, index: subscriber.subscriberIndex) { $0.subscriberIndex = $1 }
        if subscriber.isWildcard {
            Self.swapRemove(subscriber, from: &wildcards, index: subscriber.wildcardIndex) { $0.wildcardIndex = $1 }
        }
        for slot in subscriber.slots {
            let entry = slot.symbol
            let last = entry.interest.removeLast()
            if slot.interestIndex < entry.interest.count {
                entry.interest[slot.interestIndex] = last
                last.subscriber.slots[last.slot].interestIndex = slot.interestIndex
            }
            // A symbol some stream asked for but that never had a price is dropped with its last follower.
            if entry.price == nil && entry.interest.isEmpty {
                table.removeValue(forKey: entry.symbol)
            }
        }
        subscriber.slots = []
        subscriber.dirtySlots = []
        subscriber.pending = []
        hub?.subscriberRemoved(from: self)
    }

    /// Ends every stream (the hub is closing) and refuses further work.
    func endAll(_ error: RPCError) {
        isClosed = true
        for subscriber in subscribers {
            subscriber.stream.finish(error)
        }
        for subscriber in subscribers {
            remove(subscriber)
        }
    }

    // MARK: Helpers

    private func addSymbol(_ symbol: Symbol) -> LoopSymbol {
        let entry = LoopSymbol(symbol: symbol)
        table[symbol] = entry
        for subscriber in wildcards {
            addSlot(subscriber, entry)
        }
        return entry
    }

    private func addSlot(_ subscriber: PriceSubscriber, _ entry: LoopSymbol) {
        let slot = subscriber.slots.count
        entry.interest.append(LoopSymbol.Interest(subscriber: subscriber, slot: slot))
        subscriber.slots.append(PriceSubscriber.Slot(symbol: entry, interestIndex: entry.interest.count - 1))
    }

    private static func swapRemove(
        _ subscriber: PriceSubscriber, from array: inout [PriceSubscriber], index: Int,
        setIndex: (PriceSubscriber, Int) -> Void
    ) {
        guard index >= 0, index < array.count, array[index] === subscriber else { return }
        let last = array.removeLast()
        if index < array.count {
            array[index] = last
            setIndex(last, index)
        }
        setIndex(subscriber, -1)
    }
}
