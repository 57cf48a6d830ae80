import CoinWatchModel
import CoinWatchRPC

/// One `StreamPrices` call as its loop's fan-out sees it. Loop-confined, like the fan-out that owns it.
///
/// While it keeps up, it gets every tick: a drain queues the ticks it follows in `pending` (indices into the
/// drain's log) and the flush at the end of the same drain sends them. Otherwise it holds no history: per symbol
/// it follows, one slot with a dirty flag (the value to send is always the loop's latest for that symbol) and
/// the last price sent (for `only_changes`). That is what bounds a slow subscriber's memory to one pending value
/// per symbol.
final class PriceSubscriber {
    /// A tick queued for this stream during a drain: which slot, and the tick's entry in the drain's log.
    struct PendingTick {
        var slot: Int32
        var entry: Int32
    }

    struct Slot {
        let symbol: LoopSymbol
        /// Where this subscriber sits in `symbol.interest`, kept current for O(1) removal.
        var interestIndex: Int
        var isDirty = false
        var lastSent: ExactDecimal?
        /// Whether the last update sent marked the symbol stale (`only_changes` never hides a change of staleness).
        var lastSentStale = false
    }

    let stream: ServerStream
    /// The hub version of the snapshot this stream started from; batches up to it are already included.
    let startVersion: UInt64
    let intervalNanos: Int64
    let onlyChanges: Bool
    let isWildcard: Bool

    var slots: [Slot] = []
    /// Indices into `slots` of the dirty ones, in the order they became dirty.
    var dirtySlots: [Int] = []
    /// Ticks of the current drain waiting for its flush; empty outside a drain.
    var pending: [PendingTick] = []
    /// The last sequence number sent; the next message carries `sequence + 1`.
    var sequence: UInt64 = 0
    /// Snapshot messages not yet sent. The snapshot's slots are the first dirty ones and each is sent once before
    /// any other (see `LoopPriceFanout.subscribe`), so the next this many messages carry `snapshot`, the last of
    /// them `snapshot_end`.
    var snapshotRemaining = 0

    /// Position in the fan-out's `subscribers` and `wildcards` arrays (-1 when not there).
    var subscriberIndex = -1
    var wildcardIndex = -1

    /// In the fan-out's list for the next flush.
    var isQueued = false
    /// Armed while `min_interval_ms` holds updates back.
    var intervalTimer: TimerHandle?
    /// Registered with `onWritable` while the connection is above its high watermark.
    var isWaitingForWritable = false
    /// Ends the stream if the connection stays above its high watermark too long.
    var stallTimer: TimerHandle?
    /// Monotonic time before which `min_interval_ms` allows no send.
    var nextSendNanos: Int64 = 0
    var isRemoved = false

    init(stream: ServerStream, startVersion: UInt64, subscription: StreamPricesSubscription) {
        self.stream = stream
        self.startVersion = startVersion
        self.intervalNanos = Int64(subscription.minIntervalMs) * 1_000_000
        self.onlyChanges = subscription.onlyChanges
        self.isWildcard = subscription.isWildcard
    }

    /// Someone will flush this subscriber without being told again: the fan-out's list, the interval timer or
    /// the writable callback.
    var isScheduled: Bool { isQueued || intervalTimer != nil || isWaitingForWritable }

    /// Whether the next tick goes out as it is (queued in `pending`) rather than conflated into a dirty slot: no
    /// conflated values wait (they must go first, and they are newer), the connection was not full at the last
    /// flush, and no `min_interval_ms` holds sends back.
    var takesEveryTick: Bool { dirtySlots.isEmpty && intervalNanos == 0 && !isWaitingForWritable }

    /// Pending capacity kept between drains; a burst beyond it is released after its flush.
    static let retainedPendingCapacity = 128

    /// Marks a slot dirty; returns whether the subscriber needs queueing for a flush.
    @inline(__always)
    func markDirty(_ slot: Int) -> Bool {
        if !slots[slot].isDirty {
            slots[slot].isDirty = true
            dirtySlots.append(slot)
        }
        return !isScheduled
    }
}

/// One symbol as one loop knows it: the latest price the loop has seen, its encoding (made once, shared by all
/// streams of the loop), and the streams following it.
final class LoopSymbol {
    struct Interest {
        /// Unretained: the drain visits every interest of every tick, and a retain/release pair per visit was a
        /// top cost. Safe because the fan-out's `subscribers` holds every subscriber that has interests, and
        /// `LoopPriceFanout.remove` takes a subscriber's interests out while the subscriber is still alive (the
        /// caller holds it), so no interest outlives its subscriber.
        let subscriberReference: Unmanaged<PriceSubscriber>
        let slot: Int

        init(subscriber: PriceSubscriber, slot: Int) {
            subscriberReference = .passUnretained(subscriber)
            self.slot = slot
        }

        var subscriber: PriceSubscriber { subscriberReference.takeUnretainedValue() }
    }

    let symbol: Symbol
    private(set) var price: ExactDecimal?
    private(set) var timeMs: Int64 = 0
    private(set) var version: UInt64 = 0
    private(set) var sources: UInt32 = 0
    private(set) var isStale = false
    var interest: [Interest] = []
    private var encoded: SharedBytes?

    init(symbol: Symbol) {
        self.symbol = symbol
    }

    func update(price: ExactDecimal, timeMs: Int64, version: UInt64, sources: UInt32, isStale: Bool) {
        self.price = price
        self.timeMs = timeMs
        self.version = version
        self.sources = sources
        self.isStale = isStale
        encoded = nil
    }

    /// The `PriceUpdate` without its sequence number, encoded on first use after each change.
    func payload(_ price: ExactDecimal) -> SharedBytes {
        if let encoded { return encoded }
        let bytes = PriceUpdateEncoding.payload(
            symbol: symbol, price: price, sourceTimeMs: timeMs, sources: sources, stale: isStale)
        encoded = bytes
        return bytes
    }
}
