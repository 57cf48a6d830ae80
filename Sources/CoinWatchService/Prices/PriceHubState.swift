import CoinWatchModel
import Synchronization

/// The latest price of one symbol, with the version of the publish that set it.
struct LatestPrice: Sendable, Hashable {
    var price: ExactDecimal
    var timeMs: Int64
    /// The hub's publish counter when this price was set; 0 for prices loaded from the store.
    var version: UInt64
    var sources: UInt32 = 0
    var isStale = false

}

/// One published tick waiting in a loop's mailbox, with the version of the publish that carried it.
struct MailboxTick: Sendable {
    var symbol: Symbol
    var price: ExactDecimal
    var timeMs: Int64
    var version: UInt64
    var sources: UInt32
    var isStale: Bool

    init(_ tick: PriceTick, version: UInt64) {
        symbol = tick.symbol
        price = tick.price
        timeMs = tick.timeMs
        self.version = version
        sources = tick.sources
        isStale = tick.isStale
    }
}

/// Ticks published for one loop and not yet taken by it, in publish order.
///
/// Publishers append and post a job only when none is pending, so however fast the feed and however busy the
/// loop, a loop's backlog is one job. Streams that keep up get every tick, so the mailbox keeps them all, up to
/// `limit`: a loop that falls further behind than that has its backlog conflated to the latest tick per symbol
/// until it drains (as a slow stream is), which bounds both the memory (`max(limit, symbols)` ticks plus one
/// batch) and how stale the loop's streams can get.
struct FanoutMailbox {
    private(set) var ticks: [MailboxTick] = []
    /// Set while conflating: where each symbol's tick sits in `ticks`.
    private var positions: [Symbol: Int]?
    var isScheduled = false

    var isConflating: Bool { positions != nil }

    mutating func append(_ batch: [PriceTick], version: UInt64, limit: Int) {
        if var positions {
            self.positions = nil
            for tick in batch {
                let entry = MailboxTick(tick, version: version)
                if let index = positions[tick.symbol] {
                    ticks[index] = entry
                } else {
                    positions[tick.symbol] = ticks.count
                    ticks.append(entry)
                }
            }
            self.positions = positions
            return
        }
        ticks.reserveCapacity(ticks.count + batch.count)
        for tick in batch {
            ticks.append(MailboxTick(tick, version: version))
        }
        if ticks.count > limit {
            conflate()
        }
    }

    /// Hands the ticks to the loop (swapping buffers, so neither side reallocates) and starts afresh.
    mutating func take(into target: inout [MailboxTick]) {
        swap(&ticks, &target)
        positions = nil
    }

    /// Keeps the last tick of each symbol, in the order of those last ticks (versions stay ascending), and
    /// replaces in place from then on.
    private mutating func conflate() {
        var positions: [Symbol: Int] = [:]
        var kept: [MailboxTick] = []
        for tick in ticks.reversed() where positions[tick.symbol] == nil {
            positions[tick.symbol] = kept.count
            kept.append(tick)
        }
        kept.reverse()
        for (symbol, index) in positions {
            positions[symbol] = kept.count - 1 - index
        }
        ticks = kept
        self.positions = positions
    }
}

/// Everything the hub guards with its state lock.
struct PriceHubState {
    var latest: [Symbol: LatestPrice] = [:]
    /// Incremented by every publish; a stream's snapshot records it so the loop skips batches already included.
    var version: UInt64 = 0
    /// One fan-out per event loop that ever had a stream, created on first use.
    var fanouts: [LoopPriceFanout] = []
    /// Live streams per entry of `fanouts`; a publish skips loops at 0.
    var subscriberCounts: [Int] = []
    var isClosed = false

    func fanoutIndex(_ fanout: LoopPriceFanout) -> Int? {
        fanouts.firstIndex { $0 === fanout }
    }
}

/// Counters readable from any thread without the state lock.
final class PriceHubCounters: Sendable {
    let publishedTicks = Atomic<Int>(0)
    let refusedTicks = Atomic<Int>(0)
    let slowSubscribersEnded = Atomic<Int>(0)
}
