import CoinWatchMetrics

/// `GET /metrics`, `/healthz` and `/readyz`: what operators and orchestrators poll.
struct OperatorEndpoints: Sendable {
    let metrics: MetricsRegistry
    /// Whether the service serves (the store is open and the feed runs).
    let isServing: @Sendable () -> Bool
    /// Whether graceful shutdown has begun.
    let isShuttingDown: @Sendable () -> Bool

    func response(_ route: HTTPRoute) -> HTTPResponse {
        switch route {
        case .metrics:
            return HTTPResponse(status: 200, headers: [("content-type", PrometheusText.contentType)],
                                body: Array(metrics.render().utf8))
        case .healthz:
            // Alive and serving: a 503 tells a supervisor to look (or restart) before clients notice.
            return isServing() ? .text(200, "ok") : .text(503, "not serving: the service has not started or is stopping")
        case .readyz:
            // Ready for new traffic: serving and not shutting down, so a load balancer drains us first.
            if isShuttingDown() { return .text(503, "not ready: shutting down") }
            return isServing() ? .text(200, "ready") : .text(503, "not ready: the service has not started")
        default:
            return .text(404, "not found")
        }
    }
}
