public import CoinWatchModel

/// A source of ticks that publishes into a `PriceHub` from its own thread.
public protocol PriceFeed: AnyObject, Sendable {
    /// What the feed is, for the startup log line (`sim seed 1, 10 ticks/s per symbol`).
    var name: String { get }
    /// The symbols it will publish, for the startup log line.
    var symbols: [Symbol] { get }
    /// Starts publishing. Calling it again does nothing.
    func start()
    /// Stops publishing and waits for the feed's thread to finish. Calling it again does nothing.
    func stop()
    /// The state of each source the feed reads, for `Health/Check` and metrics. Any thread.
    var sourceStats: [PriceSourceStats] { get }
}

extension PriceFeed {
    public var sourceStats: [PriceSourceStats] { [] }
}

/// The `none` feed: prices come only from `PublishPrices`.
public final class NoFeed: PriceFeed {
    public init() {}

    public var name: String { "none (prices only from PublishPrices)" }
    public var symbols: [Symbol] { [] }
    public func start() {}
    public func stop() {}
}
