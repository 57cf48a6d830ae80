import Synchronization

/// Whether the service is serving: false until the store is open and the feed runs, false again once it is closing;
/// and the state of each price source. Answered by `Health/Check` (see `HealthState+Methods`).
public final class HealthState: Sendable {
    private let serving = Atomic<Bool>(false)
    private let feedSources = Mutex<(@Sendable () -> [PriceSourceStats])?>(nil)

    public init() {}

    public func setServing(_ value: Bool) { serving.store(value, ordering: .releasing) }

    public var isServing: Bool { serving.load(ordering: .acquiring) }

    /// Where the per-source feed state comes from (the service sets it to its feed's `sourceStats`).
    public func reportFeedSources(_ sources: @escaping @Sendable () -> [PriceSourceStats]) {
        feedSources.withLock { $0 = sources }
    }

    /// The state of each price source now.
    public var feedSourceStats: [PriceSourceStats] {
        let sources = feedSources.withLock { $0 }
        return sources?() ?? []
    }
}
