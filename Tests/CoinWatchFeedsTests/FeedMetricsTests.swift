import CoinWatchMetrics
import CoinWatchService
import Testing
@testable import CoinWatchFeeds

struct FeedMetricsTests {
    @Test func eachSourceIsASeriesAndRejectionsCarryTheirReason() {
        var binance = PriceSourceStats(name: "binance")
        binance.isConnected = true
        binance.lastMessageAgeMs = 1500
        binance.messages = 42
        binance.prices = 40
        binance.reconnects = 2
        binance.failedConnections = 6
        binance.gaps = 1
        binance.missedMessages = 3
        binance.malformed = 4
        binance.duplicates = 5
        binance.rateLimits = 1
        let sources = [binance, PriceSourceStats(name: "kraken")]
        let registry = MetricsRegistry()
        registry.register(FeedMetrics { sources })
        let lines = Set(registry.render().split(separator: "\n").map(String.init))
        for line in [
            "# TYPE coinwatch_feed_connected gauge",
            #"coinwatch_feed_connected{source="binance"} 1"#,
            #"coinwatch_feed_connected{source="kraken"} 0"#,
            #"coinwatch_feed_last_message_age_seconds{source="binance"} 1.5"#,
            #"coinwatch_feed_last_message_age_seconds{source="kraken"} -1"#,
            "# TYPE coinwatch_feed_messages_total counter",
            #"coinwatch_feed_messages_total{source="binance"} 42"#,
            #"coinwatch_feed_prices_total{source="binance"} 40"#,
            #"coinwatch_feed_reconnects_total{source="binance"} 2"#,
            #"coinwatch_feed_failed_connections_total{source="binance"} 6"#,
            #"coinwatch_feed_gaps_total{source="binance"} 1"#,
            #"coinwatch_feed_missed_messages_total{source="binance"} 3"#,
            #"coinwatch_feed_rejected_messages_total{source="binance",reason="malformed"} 4"#,
            #"coinwatch_feed_rejected_messages_total{source="binance",reason="duplicate"} 5"#,
            #"coinwatch_feed_rejected_messages_total{source="kraken",reason="unmapped"} 0"#,
            #"coinwatch_feed_rate_limits_total{source="binance"} 1"#,
            #"coinwatch_feed_venue_errors_total{source="kraken"} 0"#,
        ] {
            #expect(lines.contains(line), "\(line)")
        }
    }

    @Test func noSourcesMeansFamiliesWithoutSamples() {
        let families = FeedMetrics { [] }.collect()
        #expect(families.count == 11)
        #expect(families.allSatisfy { $0.samples.isEmpty })
    }
}
