public import CoinWatchService

/// Where a source's prices go: the hub itself (a lone `sim` or `replay` in tests), or the aggregator that combines
/// every source's price per symbol before the hub sees it.
public protocol PriceSink: Sendable {
    /// Takes `ticks` in order; returns how many were taken.
    @discardableResult
    func publish(_ ticks: [PriceTick]) -> Int
}

extension PriceHub: PriceSink {}
