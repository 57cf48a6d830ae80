public import CoinWatchMetrics

extension PushStats {
    /// The state as metric families (`coinwatch_push_…`): counters for what became of the alerts and for the
    /// provider tokens made, gauges for the queue, the paused flag and the devices. Every family is reported, at 0
    /// while delivery is off, so dashboards have no missing series.
    public var metricFamilies: [MetricFamily] {
        var families: [MetricFamily] = []
        func gauge(_ name: String, _ help: String, _ value: Int) {
            families.append(.gauge(name, help: help, [MetricSample([], value)]))
        }
        func counter(_ name: String, _ help: String, _ value: Int) {
            families.append(.counter(name, help: help, [MetricSample([], value)]))
        }
        gauge("coinwatch_push_enabled", "1 when the server delivers alerts to APNs.", enabled ? 1 : 0)
        gauge("coinwatch_push_paused", "1 while delivery is paused because APNs refused a fresh provider token.",
              paused ? 1 : 0)
        gauge("coinwatch_push_queued", "Alerts waiting to be sent to APNs, retries waiting for their time included.",
              queued)
        gauge("coinwatch_push_in_flight", "Alerts sent to APNs and not yet answered.", inFlight)
        counter("coinwatch_push_delivered_total", "Alerts APNs accepted (HTTP 200).", delivered)
        counter("coinwatch_push_retried_total", "Sends retried after a 429, a 5xx, a timeout or a dropped connection.",
                retried)
        counter("coinwatch_push_expired_total", "Alerts dropped because they expired before APNs accepted them.", expired)
        counter("coinwatch_push_rejected_total", "Alerts APNs refused for good.", rejected)
        counter("coinwatch_push_provider_tokens_total", "Provider tokens (JWTs) made since the start.", providerTokens)
        gauge("coinwatch_push_registered_devices", "Devices registered for push.", registeredDevices)
        gauge("coinwatch_push_disabled_devices", "Registered devices whose token APNs refused.", disabledDevices)
        return families
    }
}

extension PushService {
    /// Push delivery's collector for the metrics registry: each scrape reads the counters' atomics and the
    /// provider's status, and never waits for the alert thread or the provider.
    public var metricsCollector: any MetricsCollector {
        MetricsClosure { [self] in stats.metricFamilies }
    }
}
