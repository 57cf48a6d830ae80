import CoinWatchProto
public import CoinWatchRPC

extension HealthState {
    /// `Health/Check`: SERVING once the store is open and the feed runs; NOT_FOUND for a service this server does not
    /// know.
    public var methods: [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { request, _ throws(RPCError) in
                guard request.service.isEmpty || request.service == "coinwatch.v1.CoinWatch" else {
                    throw RPCError(code: .notFound, message: "unknown service '\(request.service)'")
                }
                return V1.HealthCheckResponse(
                    status: self.isServing ? .serving : .notServing, push: self.push)
            }),
        ]
    }
}
