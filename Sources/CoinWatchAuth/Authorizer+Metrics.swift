public import CoinWatchMetrics
import Synchronization

/// What the authoriser counts beyond the dispatcher's per-status call counts (`grpc_server_handled_total` already
/// has every UNAUTHENTICATED, PERMISSION_DENIED and RESOURCE_EXHAUSTED answer): failed authentications by reason,
/// attempts refused unchecked because their address failed too often, and connections the per-address limits
/// refused. Never a credential or an address: labels are fixed words, so a scrape can leak nothing.
final class AuthCounters: Sendable {
    let malformed = Atomic<UInt64>(0)
    let unknownKey = Atomic<UInt64>(0)
    let wrongSecret = Atomic<UInt64>(0)
    let revoked = Atomic<UInt64>(0)
    let unclaimedDevice = Atomic<UInt64>(0)
    let unknownToken = Atomic<UInt64>(0)
    let throttled = Atomic<UInt64>(0)

    /// Counts one failed authentication.
    func count(_ failure: CredentialFailure) {
        switch failure.code {
        case .unknownKey: unknownKey.add(1, ordering: .relaxed)
        case .wrongSecret: wrongSecret.add(1, ordering: .relaxed)
        case .revoked: revoked.add(1, ordering: .relaxed)
        case .unclaimedDevice: unclaimedDevice.add(1, ordering: .relaxed)
        case .unknownToken: unknownToken.add(1, ordering: .relaxed)
        default: malformed.add(1, ordering: .relaxed)
        }
    }

    /// The families, with the connection limiter's count of refusals.
    func families(refusedConnections: UInt64) -> [MetricFamily] {
        let reasons: [(String, UInt64)] = [
            ("malformed", malformed.load(ordering: .relaxed)), ("unknown_key", unknownKey.load(ordering: .relaxed)),
            ("wrong_secret", wrongSecret.load(ordering: .relaxed)), ("revoked", revoked.load(ordering: .relaxed)),
            ("unclaimed_device", unclaimedDevice.load(ordering: .relaxed)),
            ("unknown_token", unknownToken.load(ordering: .relaxed)),
        ]
        return [
            .counter(
                "coinwatch_auth_failures_total", help: "Failed authentications (a credential that is not valid), by reason.",
                reasons.map { MetricSample([MetricLabel("reason", $0.0)], $0.1) }),
            .counter(
                "coinwatch_auth_throttled_total",
                help: "Authentication attempts refused unchecked: their address failed too often (--failed-auth-rate).",
                [MetricSample([], throttled.load(ordering: .relaxed))]),
            .counter(
                "coinwatch_auth_connections_refused_total",
                help: "Connections refused by the per-address limits (--max-connections-per-address, --connection-rate).",
                [MetricSample([], refusedConnections)]),
        ]
    }
}

extension Authorizer {
    /// The authoriser's counters for a scrape (`coinwatch_auth_*`).
    public var metrics: any MetricsCollector {
        let counters = self.counters
        let connections = self.connections
        return MetricsClosure { counters.families(refusedConnections: connections.refused.load(ordering: .relaxed)) }
    }
}
