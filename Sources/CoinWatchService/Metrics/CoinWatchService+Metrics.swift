public import CoinWatchMetrics
import Synchronization

extension CoinWatchService {
    /// The service's metrics for a scrape: price streams, the settings writer, the alert engine. Every series
    /// exists from the start (at 0). Read without stopping anything: the hub's per-loop counter cells, the
    /// writer's and the alert thread's statistics snapshots.
    public var metrics: any MetricsCollector {
        let hub = self.hub
        let settings = self.settings
        let alerts = self.alerts
        return MetricsClosure {
            var families = hub.metricFamilies()
            let writes = settings.stats
            families += [
                .counter("coinwatch_settings_saves_total",
                         help: "Saves and deletes of device settings answered with success.", [MetricSample([], writes.writesCommitted)]),
                .counter("coinwatch_settings_save_errors_total",
                         help: "Saves and deletes answered with an error by the settings writer.", [MetricSample([], writes.writesFailed)]),
                .counter("coinwatch_settings_journal_syncs_total",
                         help: "Durable writes of the settings journal (one fdatasync each, one per group commit).",
                         [MetricSample([], writes.batchesWritten)]),
                .gauge("coinwatch_settings_saves_per_sync",
                       help: "Saves and deletes per journal sync since start (what one disk flush paid for).",
                       [MetricSample([], writes.averageRequestsPerBatch)]),
                .gauge("coinwatch_settings_pending_writes", help: "Saves and deletes waiting for the settings writer.",
                       [MetricSample([], writes.pendingWrites)]),
            ]
            let alert = alerts.stats
            families += [
                .counter("coinwatch_alert_evaluations_total", help: "Price ticks evaluated against the alert index.",
                         [MetricSample([], alert.ticksEvaluated)]),
                .counter("coinwatch_alert_ticks_folded_total",
                         help: "Price ticks folded to each symbol's lowest, highest and latest because the alert thread was behind.",
                         [MetricSample([], alert.ticksFolded)]),
                .counter("coinwatch_alerts_fired_total", help: "Alerts fired (threshold crossings).", [MetricSample([], alert.alertsFired)]),
                .counter("coinwatch_alerts_delivered_total", help: "Alerts written to StreamAlerts calls.",
                         [MetricSample([], alert.alertsDelivered)]),
                .gauge("coinwatch_alert_streams", help: "Live StreamAlerts calls.", [MetricSample([], alert.subscribers)]),
                .counter("coinwatch_alert_crossings_suppressed_total",
                         help: "Armed sides disarmed without firing: the first price after a stale period reached them unseen.",
                         [MetricSample([], alert.crossingsSuppressed)]),
                .counter("coinwatch_alerts_held_back_total",
                         help: "Alerts fired here while another node owned the device's shard (cluster mode): fired there.",
                         [MetricSample([], alert.alertsSuppressed)]),
                .counter("coinwatch_alerts_outbox_restored_total",
                         help: "Pending alerts restored from another node's replicated outbox on taking its shard over (cluster mode).",
                         [MetricSample([], alert.outboxRestored)]),
                .counter("coinwatch_alerts_delivered_elsewhere_total",
                         help: "Pending alerts that left this node's outbox because another node delivered them to a StreamAlerts call (cluster mode).",
                         [MetricSample([], alert.deliveredElsewhere)]),
                .counter("coinwatch_alerts_replayed_on_takeover_total",
                         help: "Held-back alerts fired when this node took their shard over (the old owner may have fired some).",
                         [MetricSample([], alert.alertsReplayedOnTakeover)]),
            ]
            return families
        }
    }
}

extension PriceHub {
    /// The hub's families: its atomics and every loop's counter cells, summed.
    func metricFamilies() -> [MetricFamily] {
        let fanouts = state.withLock { $0.fanouts }
        var delivered: UInt64 = 0
        var conflated: UInt64 = 0
        var streams: UInt64 = 0
        for fanout in fanouts {
            delivered &+= fanout.counters.load(at: LoopPriceFanout.deliveredCell)
            conflated &+= fanout.counters.load(at: LoopPriceFanout.conflatedCell)
            streams &+= fanout.counters.load(at: LoopPriceFanout.streamsCell)
        }
        return [
            .gauge("coinwatch_price_streams", help: "Live StreamPrices calls, on every transport.",
                   [MetricSample([], Double(Int64(bitPattern: streams)))]),
            .counter("coinwatch_price_deliveries_total", help: "Price updates sent on StreamPrices calls.",
                     [MetricSample([], delivered)]),
            .counter("coinwatch_price_conflations_total",
                     help: "Price updates replaced by a newer one before a slow stream could take them.", [MetricSample([], conflated)]),
            .counter("coinwatch_price_slow_consumer_closes_total",
                     help: "StreamPrices calls ended RESOURCE_EXHAUSTED for not keeping up.",
                     [MetricSample([], counters.slowSubscribersEnded.load(ordering: .relaxed))]),
            .counter("coinwatch_price_ticks_published_total", help: "Price ticks applied (feeds and PublishPrices).",
                     [MetricSample([], counters.publishedTicks.load(ordering: .relaxed))]),
            .counter("coinwatch_price_ticks_refused_total", help: "Price ticks refused (symbol limit, hub closed).",
                     [MetricSample([], counters.refusedTicks.load(ordering: .relaxed))]),
            .gauge("coinwatch_price_symbols", help: "Symbols with a price.", [MetricSample([], state.withLock { $0.latest.count })]),
        ]
    }
}
