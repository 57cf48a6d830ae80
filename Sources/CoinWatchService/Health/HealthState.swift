public import CoinWatchProto
import Synchronization

/// Whether the service is serving: false until the store is open and the feed runs, false again once it is closing.
/// Answered by `Health/Check` (see `HealthState+Methods`), with the node's cluster state in cluster mode.
public final class HealthState: Sendable {
    private let serving = Atomic<Bool>(false)
    private let clusterReport = Mutex<(@Sendable () -> V1.ClusterHealth)?>(nil)

    public init() {}

    public func setServing(_ value: Bool) { serving.store(value, ordering: .releasing) }

    public var isServing: Bool { serving.load(ordering: .acquiring) }

    /// Cluster mode: `Health/Check` answers with what `report` says (called on the event loop that answers: it
    /// must only read state, never wait).
    public func reportCluster(_ report: @escaping @Sendable () -> V1.ClusterHealth) {
        clusterReport.withLock { $0 = report }
    }

    /// This node's cluster state; nil on a single node.
    public var cluster: V1.ClusterHealth? { clusterReport.withLock { $0 }?() }
}
