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
    }

    /// Symbols in the order their first tick was folded, so the walk is the same for the same ticks.
    private var order: [Symbol] = []
    private var paths: [Symbol: Path] = [:]
    /// Ticks folded in.
    private(set) var count = 0

    /// Folds in a price; a stale mark is never folded (it must keep its place between the prices around it).
    mutating func fold(_ tick: PriceTick) {
        precondition(!tick.isStale, "a stale mark is queued as it is")
        let kept = Kept(tick: tick, arrival: count)
        count += 1
        guard var path = paths[tick.symbol] else {
            order.append(tick.symbol)
            paths[tick.symbol] = Path(low: kept, high: kept, last: kept)
            return
        }
        // Of equal extremes the first is kept: the walk is the same either way.
        if tick.price < path.low.tick.price { path.low = kept }
        if tick.price > path.high.tick.price { path.high = kept }
        path.last = kept
        paths[tick.symbol] = path
    }

    /// The kept ticks: each symbol's lowest, highest and latest price in arrival order, each tick once.
    var ticks: [PriceTick] {
        var ticks: [PriceTick] = []
        ticks.reserveCapacity(order.count * 3)
        for symbol in order {
            guard let path = paths[symbol] else { continue }
            var previous = -1
            for kept in [path.low, path.high, path.last].sorted(by: { $0.arrival < $1.arrival })
            where kept.arrival != previous {
                ticks.append(kept.tick)
                previous = kept.arrival
            }
        }
        return ticks
    }
}
