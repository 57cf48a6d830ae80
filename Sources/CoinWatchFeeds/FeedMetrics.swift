public import CoinWatchMetrics
public import CoinWatchService

/// Each price source's state for a metrics scrape, one series per source (label `source`: `binance`, `sim`, …),
/// from the same `PriceSourceStats` snapshots `Health/Check` reports.
///
/// Counters are totals since start (rates come from the scraper: `rate(coinwatch_feed_messages_total[1m])`), so
/// the health reply's messages-per-second is not repeated here. Every series exists from the first scrape, at 0.
public struct FeedMetrics: MetricsCollector {
    private let sources: @Sendable () -> [PriceSourceStats]

    /// - Parameter sources: the current snapshots (coinwatchd passes the service's `health.feedSourceStats`).
    public init(sources: @escaping @Sendable () -> [PriceSourceStats]) {
        self.sources = sources
    }

    public func collect() -> [MetricFamily] {
        Self.families(sources())
    }

    /// The families of `stats`, in a fixed order.
    static func families(_ stats: [PriceSourceStats]) -> [MetricFamily] {
        func each(_ value: (PriceSourceStats) -> UInt64) -> [MetricSample] {
            stats.map { MetricSample([MetricLabel("source", $0.name)], value($0)) }
        }
        var rejected: [MetricSample] = []
        for source in stats {
            let reasons: [(String, UInt64)] = [
                ("malformed", source.malformed), ("unknown", source.unknown), ("duplicate", source.duplicates),
                ("out_of_order", source.outOfOrder), ("unmapped", source.unmapped),
            ]
            for (reason, count) in reasons {
                rejected.append(MetricSample([MetricLabel("source", source.name), MetricLabel("reason", reason)], count))
            }
        }
        return [
            .gauge("coinwatch_feed_connected", help: "1 while the source is connected and subscribed (or running).",
                   stats.map { MetricSample([MetricLabel("source", $0.name)], $0.isConnected ? 1 : 0) }),
            .gauge("coinwatch_feed_last_message_age_seconds",
                   help: "Seconds since the source's last message of any kind; -1 before the first.",
                   stats.map {
                       MetricSample([MetricLabel("source", $0.name)], $0.lastMessageAgeMs.map { Double($0) / 1000 } ?? -1)
                   }),
            .counter("coinwatch_feed_messages_total", help: "Messages received from the source.", each(\.messages)),
            .counter("coinwatch_feed_prices_total", help: "Prices taken from the source.", each(\.prices)),
            .counter("coinwatch_feed_reconnects_total", help: "Connections made after the first.", each(\.reconnects)),
            .counter("coinwatch_feed_failed_connections_total",
                     help: "Connection attempts that ended before the WebSocket upgrade (refused, TLS, timeout).",
                     each(\.failedConnections)),
            .counter("coinwatch_feed_gaps_total", help: "Jumps in the source's numbered messages.", each(\.gaps)),
            .counter("coinwatch_feed_missed_messages_total", help: "Numbered messages missing in those gaps.",
                     each(\.missedMessages)),
            .counter("coinwatch_feed_rejected_messages_total",
                     help: "Messages counted and skipped, by reason (the connection stays).", rejected),
            .counter("coinwatch_feed_venue_errors_total", help: "Error events from the venue and refused upgrades.",
                     each(\.venueErrors)),
            .counter("coinwatch_feed_rate_limits_total",
                     help: "Rate limits from the venue (HTTP 429 on the upgrade, a rate-limit event).", each(\.rateLimits)),
        ]
    }
}
