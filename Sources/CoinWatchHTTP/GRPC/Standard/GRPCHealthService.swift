public import CoinWatchRPC
import CoinWatchProto

/// `grpc.health.v1.Health`: `Check` and `Watch`, for the probes and load balancers that speak the standard
/// health protocol.
///
/// The overall status (service "") and each served service's is SERVING while `isServing` says so, NOT_SERVING
/// otherwise (before start, during shutdown). `Watch` sends the current status, then each change: it looks
/// once a second on the stream's loop (a change of serving state is rare, and a probe that waits a second
/// for it loses nothing), and ends when the client cancels.
public struct GRPCHealthService: Sendable {
    static let check = WireMethod<GRPCHealthCheckRequest, GRPCHealthCheckResponse>(
        path: "grpc.health.v1.Health/Check", isClientStreaming: false, isServerStreaming: false)
    static let watch = WireMethod<GRPCHealthCheckRequest, GRPCHealthCheckResponse>(
        path: "grpc.health.v1.Health/Watch", isClientStreaming: false, isServerStreaming: true)

    let services: Set<String>
    let isServing: @Sendable () -> Bool

    /// - Parameter services: the fully qualified names of the services the server serves.
    public init(services: [String], isServing: @escaping @Sendable () -> Bool) {
        self.services = Set(services + ["grpc.health.v1.Health"])
        self.isServing = isServing
    }

    public var methods: [RPCMethod] {
        let health = self
        return [
            .unary(Self.check, inline: { request, _ throws(RPCError) in
                guard let status = health.status(of: request.service) else {
                    throw RPCError(code: .notFound, message: "unknown service '\(request.service)'")
                }
                return GRPCHealthCheckResponse(status: status)
            }),
            .serverStream(Self.watch, onLoop: { request, stream in
                health.watch(request.service, on: stream, last: nil)
            }),
        ]
    }

    func status(of service: String) -> GRPCHealthCheckResponse.Status? {
        guard service.isEmpty || services.contains(service) else { return nil }
        return isServing() ? .serving : .notServing
    }

    /// Sends the status when it differs from `last`, then looks again in a second.
    private func watch(_ service: String, on stream: ServerStream, last: GRPCHealthCheckResponse.Status?) {
        guard stream.isActive else { return }
        let current = status(of: service) ?? .serviceUnknown
        if current != last {
            stream.send(GRPCHealthCheckResponse(status: current))
        }
        stream.eventLoop.scheduleTimer(after: .seconds(1)) { [self] in
            watch(service, on: stream, last: current)
        }
    }
}
