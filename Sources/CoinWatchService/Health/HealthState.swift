import Synchronization

/// Whether the service is serving: false until the store is open and the feed runs, false again once it is closing.
/// Answered by `Health/Check` (see `HealthState+Methods`).
public final class HealthState: Sendable {
    private let serving = Atomic<Bool>(false)

    public init() {}

    public func setServing(_ value: Bool) { serving.store(value, ordering: .releasing) }

    public var isServing: Bool { serving.load(ordering: .acquiring) }
}
