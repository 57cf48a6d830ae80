import CoinWatchModel
import Synchronization

/// The latest price of one symbol, with the version of the publish that set it.
struct LatestPrice: Sendable, Hashable {
    var price: ExactDecimal
    var timeMs: Int64
    /// The hub's publish counter when this price was set; 0 for prices loaded from the store.
    var version: UInt64
}

/// Prices published for one loop and not yet taken by it: the latest per symbol only.
///
/// Publishers merge into it and post a job only when none is pending, so however fast the feed and however busy
/// the loop, a loop's backlog is one job and one value per symbol, never a queue of batches.
struct FanoutMailbox {
    var latest: [Symbol: LatestPrice] = [:]
    var isScheduled = false
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
