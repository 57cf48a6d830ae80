import CoinWatchRPC
import Synchronization

/// A picture of the hub for operators, benchmarks and tests.
public struct PriceHubStatistics: Sendable, Hashable {
    /// Symbols with a price.
    public var knownSymbols = 0
    /// Live `StreamPrices` calls.
    public var subscribers = 0
    /// Streams whose connection is above its high watermark, holding conflated values.
    public var waitingSubscribers = 0
    /// Dirty slots across all streams (each one pending price of one symbol for one stream).
    public var pendingUpdates = 0
    /// The most dirty slots any one stream holds: never more than the symbols it follows.
    public var maxPendingPerSubscriber = 0
    /// Messages sent on `StreamPrices` calls.
    public var deliveredUpdates = 0
    /// Ticks applied by `publish`.
    public var publishedTicks = 0
    /// Ticks refused (too many symbols, or the hub closed).
    public var refusedTicks = 0
    /// Streams ended RESOURCE_EXHAUSTED for not keeping up.
    public var slowSubscribersEnded = 0

    public init() {}
}

extension PriceHub {
    /// Gathers the statistics, visiting each event loop that has (had) streams.
    public func statistics() async -> PriceHubStatistics {
        var result = PriceHubStatistics()
        let fanouts = state.withLock { state in
            result.knownSymbols = state.latest.count
            return state.fanouts
        }
        result.publishedTicks = counters.publishedTicks.load(ordering: .relaxed)
        result.refusedTicks = counters.refusedTicks.load(ordering: .relaxed)
        result.slowSubscribersEnded = counters.slowSubscribersEnded.load(ordering: .relaxed)
        for fanout in fanouts {
            let part = await withCheckedContinuation { (continuation: CheckedContinuation<PriceHubStatistics, Never>) in
                let accepted = fanout.loop.execute { continuation.resume(returning: fanout.statistics()) }
                if !accepted { continuation.resume(returning: PriceHubStatistics()) }
            }
            result.subscribers += part.subscribers
            result.waitingSubscribers += part.waitingSubscribers
            result.pendingUpdates += part.pendingUpdates
            result.maxPendingPerSubscriber = max(result.maxPendingPerSubscriber, part.maxPendingPerSubscriber)
            result.deliveredUpdates += part.deliveredUpdates
        }
        return result
    }
}

extension LoopPriceFanout {
    /// This loop's part of the statistics. On the loop.
    func statistics() -> PriceHubStatistics {
        var result = PriceHubStatistics()
        result.subscribers = subscribers.count
        result.deliveredUpdates = deliveredUpdates
        for subscriber in subscribers {
            if subscriber.isWaitingForWritable { result.waitingSubscribers += 1 }
            result.pendingUpdates += subscriber.dirtySlots.count
            result.maxPendingPerSubscriber = max(result.maxPendingPerSubscriber, subscriber.dirtySlots.count)
        }
        return result
    }
}
