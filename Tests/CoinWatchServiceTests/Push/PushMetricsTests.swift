import CoinWatchMetrics
import CoinWatchPush
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Push delivery's metrics, as a registry renders them for a scrape.
@Suite(.timeLimit(.minutes(2)))
struct PushMetricsTests {
    static let families = [
        "coinwatch_push_enabled", "coinwatch_push_paused", "coinwatch_push_queued", "coinwatch_push_in_flight",
        "coinwatch_push_delivered_total", "coinwatch_push_retried_total", "coinwatch_push_expired_total",
        "coinwatch_push_rejected_total", "coinwatch_push_provider_tokens_total", "coinwatch_push_registered_devices",
        "coinwatch_push_disabled_devices",
    ]

    func scrape(_ service: PushService) -> [String] {
        let registry = MetricsRegistry()
        registry.register(service.metricsCollector)
        return registry.render().split(separator: "\n").map(String.init)
    }

    @Test func deliveriesRefusalsAndDevicesAreCounted() async throws {
        let fake = FakeAPNs()
        try await withAlertService(configure: delivering(to: fake)) { harness in
            try await harness.register("phone-1", token: pushToken("61"))
            try await harness.register("phone-2", token: pushToken("62"))
            try await harness.save("phone-1", ["BTC": rule(above: "5000")])
            try await harness.save("phone-2", ["BTC": rule(above: "5000")])
            harness.publish("BTC", "4900")
            harness.publish("BTC", "5010")
            #expect(await harness.waitForSends(fake, 2))
            for request in fake.received {
                if request.deviceToken == pushToken("61") {
                    fake.deliver(request)
                } else {
                    fake.answer(request, status: 410, reason: "Unregistered", outcome: .tokenRejected)
                }
            }
            #expect(await harness.waitForOutbox { $0.isEmpty })
            #expect(await eventually { harness.pushStats.disabledDevices == 1 })

            let lines = scrape(harness.service.push)
            for name in Self.families {
                #expect(lines.contains { $0.hasPrefix("# TYPE \(name) ") }, "\(name) is reported")
            }
            #expect(lines.contains("# TYPE coinwatch_push_delivered_total counter"))
            #expect(lines.contains("coinwatch_push_enabled 1"))
            #expect(lines.contains("coinwatch_push_delivered_total 1"))
            #expect(lines.contains("coinwatch_push_rejected_total 1"))
            #expect(lines.contains("coinwatch_push_registered_devices 2"))
            #expect(lines.contains("coinwatch_push_disabled_devices 1"))
            #expect(lines.contains("coinwatch_push_in_flight 0"))
        }
    }

    @Test func withDeliveryOffEveryFamilyIsReportedAtZero() async throws {
        try await withAlertService { harness in
            let lines = scrape(harness.service.push)
            for name in Self.families {
                #expect(lines.contains("\(name) 0"), "\(name) is 0")
            }
        }
    }
}
