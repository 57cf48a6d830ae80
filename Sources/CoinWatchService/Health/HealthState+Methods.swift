import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension HealthState {
    /// `Health/Check`: SERVING once the store is open and the feed runs, with the state of each price source and,
    /// in cluster mode, the node's cluster state;
    /// NOT_FOUND for a service this server does not know.
    public var methods: [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { request, _ throws(RPCError) in
                guard request.service.isEmpty || request.service == "coinwatch.v1.CoinWatch" else {
                    throw RPCError(code: .notFound, message: "unknown service '\(request.service)'")
                }
                var response = V1.HealthCheckResponse(
                    status: self.isServing ? .serving : .notServing, feeds: self.feedSourceStats.map(Self.wire),
                    push: self.push)
                response.cluster = self.cluster
                return response
            }),
        ]
    }

    static func wire(_ stats: PriceSourceStats) -> V1.FeedSourceHealth {
        V1.FeedSourceHealth(
            name: stats.name, connected: stats.isConnected, lastMessageAgeMs: stats.lastMessageAgeMs ?? -1,
            reconnects: stats.reconnects, gaps: stats.gaps, messagesPerSecond: V1.Decimal(stats.messagesPerSecond),
            messages: stats.messages, rejectedMessages: stats.rejectedMessages, lastError: stats.lastError)
    }
}
