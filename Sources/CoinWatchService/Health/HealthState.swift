public import CoinWatchProto
import Synchronization

/// Whether the service is serving: false until the store is open and the feed runs, false again once it is closing;
/// the state of each price source and of push delivery; and in cluster mode the node's cluster state. Answered by
/// `Health/Check` (see `HealthState+Methods`).
public final class HealthState: Sendable {
    private let serving = Atomic<Bool>(false)
    private let feedSources = Mutex<(@Sendable () -> [PriceSourceStats])?>(nil)
    private let clusterReport = Mutex<(@Sendable () -> V1.ClusterHealth)?>(nil)
    /// The push delivery state to report (set once the service is assembled).
    private let pushState = Mutex<(@Sendable () -> V1.PushDeliveryState)?>(nil)

    public init() {}

    func reportPush(_ state: @escaping @Sendable () -> V1.PushDeliveryState) {
        pushState.withLock { $0 = state }
    }

    /// The push delivery state, when the service has push delivery.
    var push: V1.PushDeliveryState? { pushState.withLock { $0 }?() }

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

    /// Cluster mode: `Health/Check` answers with what `report` says (called on the event loop that answers: it
    /// must only read state, never wait).
    public func reportCluster(_ report: @escaping @Sendable () -> V1.ClusterHealth) {
        clusterReport.withLock { $0 = report }
    }

    /// This node's cluster state; nil on a single node.
    public var cluster: V1.ClusterHealth? { clusterReport.withLock { $0 }?() }
}
