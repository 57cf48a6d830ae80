import Synchronization

/// Something that reports metrics when scraped: a component's counters turned into families.
///
/// Collectors are called on the scraping thread (an event loop serving `GET /metrics`), so `collect` reads
/// atomics or takes a Sendable snapshot and must not block for long. Every counter a collector owns should be
/// reported from the start, at 0, so dashboards have no missing series.
public protocol MetricsCollector: Sendable {
    func collect() -> [MetricFamily]
}

/// A collector made of a closure: the simplest way for a component that keeps a Sendable stats snapshot to
/// expose it (`registry.register(MetricsClosure { [hub] in hub.stats.families })`).
public struct MetricsClosure: MetricsCollector {
    let body: @Sendable () -> [MetricFamily]

    public init(_ body: @escaping @Sendable () -> [MetricFamily]) {
        self.body = body
    }

    public func collect() -> [MetricFamily] { body() }
}

/// Every collector of a process, rendered together on a scrape.
///
/// Families with the same name from several collectors (one per transport, say) are merged: the first one's
/// help and type are kept and the samples follow in registration order.
public final class MetricsRegistry: Sendable {
    private let collectors = Mutex<[any MetricsCollector]>([])

    public init() {}

    /// Adds a collector; it is asked on every later scrape.
    public func register(_ collector: any MetricsCollector) {
        collectors.withLock { $0.append(collector) }
    }

    /// Every family of every collector, merged by name, in first-seen order.
    public func collect() -> [MetricFamily] {
        let current = collectors.withLock { $0 }
        var families: [MetricFamily] = []
        var index: [String: Int] = [:]
        for collector in current {
            for family in collector.collect() {
                if let position = index[family.name] {
                    families[position].samples += family.samples
                    families[position].histograms += family.histograms
                } else {
                    index[family.name] = families.count
                    families.append(family)
                }
            }
        }
        return families
    }

    /// The scrape's body in the Prometheus text format 0.0.4.
    public func render() -> String {
        PrometheusText.render(collect())
    }
}
