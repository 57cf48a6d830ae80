@testable import CoinWatchAuth
import CoinWatchMetrics
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Testing

/// The authoriser's own metrics: failures by reason, throttled attempts, refused connections; never a credential.
@Suite("authorisation metrics")
struct AuthMetricsTests {
    /// The value of `name`'s sample with `reason` (nil: its only sample).
    static func value(_ families: [MetricFamily], _ name: String, reason: String? = nil) -> Double? {
        let family = families.first { $0.name == name }
        let sample = family?.samples.first { sample in
            reason.map { sample.labels == [MetricLabel("reason", $0)] } ?? sample.labels.isEmpty
        }
        return sample?.value
    }

    @Test("failed authentications are counted by reason, throttled attempts and refused connections on their own")
    func counted() throws {
        let harness = try AuthHarness(configure: {
            $0.limits.failedAuthenticationRate = RateLimit(perSecond: 1, burst: 2)
            $0.limits.connectionsPerAddress = 1
        })
        let method = V1.CoinWatch.getPrices.path
        let key = try harness.keyToken(ScopeSet([.pricesRead]))
        let forged = withWrongSecret(key)
        var families = harness.authorizer.metrics.collect()
        // Every series is there from the start, at 0.
        for reason in ["malformed", "unknown_key", "wrong_secret", "revoked", "unclaimed_device", "unknown_token"] {
            #expect(Self.value(families, "coinwatch_auth_failures_total", reason: reason) == 0)
        }
        #expect(Self.value(families, "coinwatch_auth_throttled_total") == 0)
        #expect(Self.value(families, "coinwatch_auth_connections_refused_total") == 0)

        #expect(harness.check(method, authorization: "Bearer " + forged, peer: "10.7.7.7:1") == .unauthenticated)
        #expect(harness.check(method, authorization: "Basic abc", peer: "10.7.7.7:2") == .unauthenticated)
        #expect(harness.check(method, authorization: "Bearer " + forged, peer: "10.7.7.7:3") == .resourceExhausted)
        #expect(harness.check(method, authorization: "Bearer " + key, peer: "10.7.7.8:1") == .ok)
        #expect(harness.authorizer.connections.admit(PeerAddress("10.7.7.9:1"), nowNanos: 0) == nil)
        #expect(harness.authorizer.connections.admit(PeerAddress("10.7.7.9:2"), nowNanos: 0)?.code == .resourceExhausted)

        families = harness.authorizer.metrics.collect()
        #expect(Self.value(families, "coinwatch_auth_failures_total", reason: "wrong_secret") == 1)
        #expect(Self.value(families, "coinwatch_auth_failures_total", reason: "malformed") == 1)
        #expect(Self.value(families, "coinwatch_auth_failures_total", reason: "unknown_key") == 0)
        #expect(Self.value(families, "coinwatch_auth_throttled_total") == 1)
        #expect(Self.value(families, "coinwatch_auth_connections_refused_total") == 1)
        let text = PrometheusText.render(families)
        #expect(!text.contains(key.dropFirst(21)) && !text.contains("10.7.7"))
    }
}
