import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC
import Synchronization

/// `Health/Check`: SERVING once the store is open and the feed runs, with the state of each price source.
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

    public var methods: [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { request, _ throws(RPCError) in
                guard request.service.isEmpty || request.service == "coinwatch.v1.CoinWatch" else {
                    throw RPCError(code: .notFound, message: "unknown service '\(request.service)'")
                }
                return V1.HealthCheckResponse(
                    status: self.isServing ? .serving : .notServing, feeds: self.feedSourceStats.map(Self.wire))
            }),
        ]
    }

    static func wire(_ stats: PriceSourceStats) -> V1.FeedSourceHealth {
        V1.FeedSourceHealth(
            name: stats.name, connected: stats.isConnected, lastMessageAgeMs: stats.lastMessageAgeMs ?? -1,
            reconnects: stats.reconnects, gaps: stats.gaps, messagesPerSecond: PriceWire.decimal(stats.messagesPerSecond),
            messages: stats.messages, rejectedMessages: stats.rejectedMessages, lastError: stats.lastError)
    }
}
