import CoinWatchProto
public import CoinWatchRPC
import Synchronization

/// `Health/Check`: SERVING once the store is open and the feed runs.
public final class HealthState: Sendable {
    private let serving = Atomic<Bool>(false)
    /// The push delivery state to report (set once the service is assembled).
    private let pushState = Mutex<(@Sendable () -> V1.PushDeliveryState)?>(nil)

    public init() {}

    func reportPush(_ state: @escaping @Sendable () -> V1.PushDeliveryState) {
        pushState.withLock { $0 = state }
    }

    public func setServing(_ value: Bool) { serving.store(value, ordering: .releasing) }

    public var isServing: Bool { serving.load(ordering: .acquiring) }

    public var methods: [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { request, _ throws(RPCError) in
                guard request.service.isEmpty || request.service == "coinwatch.v1.CoinWatch" else {
                    throw RPCError(code: .notFound, message: "unknown service '\(request.service)'")
                }
                return V1.HealthCheckResponse(
                    status: self.isServing ? .serving : .notServing, push: self.pushState.withLock { $0 }?())
            }),
        ]
    }
}
