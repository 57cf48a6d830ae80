import CoinWatchModel

/// Ticks the alert thread had no time for, folded per symbol into the few that decide its crossings.
///
/// The alert thread evaluates every tick in publish order. When prices arrive faster than it evaluates them (a
/// venue bursting, a replay at full speed, PublishPrices from many callers), queueing every tick grows without
/// bound. Past `AlertService.Configuration.tickBacklogLimit` queued ticks, new ones are folded here instead: per
/// symbol, its lowest, its highest and its latest price, kept in the order they arrived.
///
/// Evaluating those in order evaluates a subsequence of the real ticks, so:
/// - every level between the lowest and the highest folded price is crossed at least once: the walk passes
///   through both, in their order, then ends at the latest, so a spike or a dip is never hidden;
/// - nothing fires that the prices did not do: each step goes from one real price to a later one;
/// - what can be missed is a level crossed back and forth between two kept prices, which the full stream crosses
///   each time and the walk once or twice (docs/ALERTS.md has an example).
struct FoldedTicks: Sendable {
    private struct Kept: Sendable {
        var tick: PriceTick
        var arrival: Int
    }

    private struct Path: Sendable {
        var low: Kept
        var high: Kept
        var last: Kept

        /// The kept ticks in arrival order, each once.
        func append(to ticks: inout [PriceTick]) {
            var previous = -1
            for kept in [low, high, last].sorted(by: { $0.arrival < $1.arrival }) where kept.arrival != previous {
                ticks.append(kept.tick)
                previous = kept.arrival
            }
        }
    }

    /// One path per symbol, in the order its first tick was folded, so the walk is the same for the same ticks.
    private var paths: [Path] = []
    private var pathIndex: [Symbol: Int] = [:]
    /// Ticks folded in.
    private(set) var count = 0

    /// Folds in a price; a stale mark is never folded (it must keep its place between the prices around it).
    mutating func fold(_ tick: PriceTick) {
        precondition(!tick.isStale, "a stale mark is queued as it is")
        let kept = Kept(tick: tick, arrival: count)
        count += 1
        guard let index = pathIndex[tick.symbol] else {
            pathIndex[tick.symbol] = paths.count
            paths.append(Path(low: kept, high: kept, last: kept))
            return
        }
        // Of equal extremes the first is kept, so the walk keeps more of the path the prices took.
        if tick.price < paths[index].low.tick.price { paths[index].low = kept }
        if tick.price > paths[index].high.tick.price { paths[index].high = kept }
        paths[index].last = kept
    }

    /// The kept ticks: each symbol's lowest, highest and latest price in arrival order, each tick once.
    var ticks: [PriceTick] {
        var ticks: [PriceTick] = []
        ticks.reserveCapacity(paths.count * 3)
        for path in paths { path.append(to: &ticks) }
        return ticks
    }
}
