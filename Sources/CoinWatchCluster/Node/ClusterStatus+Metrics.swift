public import CoinWatchMetrics

extension ClusterStatus {
    /// The NATS connection states, each a series of `coinwatch_cluster_nats_state` (1 for the current one), so
    /// an alert rule can name the state it cares about and every series exists from the first scrape.
    static let natsStates = ["connecting", "connected", "reconnecting", "disconnected", "closed"]

    /// The node's part in the cluster as metric families (`coinwatch_cluster_…`), the same values `Health/Check`
    /// reports: the node, its NATS connection, the members it sees, its shards and leases, and the price bus's and
    /// settings replication's counters. Lease series carry the lease's key (`lease="shard.07"`, `lease="feed.sim"`)
    /// and exist while the node holds the lease.
    public var metricFamilies: [MetricFamily] {
        let leaseLabel = { (lease: LeaseState) in [MetricLabel("lease", lease.key)] }
        return [
            .gauge("coinwatch_cluster_node_info", help: "Always 1; the node's id as a label.",
                   [MetricSample([MetricLabel("node_id", nodeID)], 1)]),
            .gauge("coinwatch_cluster_nats_state", help: "1 for the NATS connection's current state, 0 for the others.",
                   Self.natsStates.map { MetricSample([MetricLabel("state", $0)], $0 == natsState ? 1 : 0) }),
            .counter("coinwatch_cluster_nats_reconnects_total", help: "Reconnections to NATS after the first connection.",
                     [MetricSample([], reconnects)]),
            .gauge("coinwatch_cluster_members", help: "Nodes with a live entry in the nodes bucket, this one included.",
                   [MetricSample([], members.count)]),
            .gauge("coinwatch_cluster_owned_shards", help: "Alert shards (of 64) this node evaluates and delivers.",
                   [MetricSample([], ownedShards.count)]),
            .gauge("coinwatch_cluster_runs_feed", help: "1 while this node holds the live feed's lease and runs it.",
                   [MetricSample([], runsFeed ? 1 : 0)]),
            .gauge("coinwatch_cluster_lease_age_seconds", help: "Seconds since this node took the lease.",
                   leases.map { MetricSample(leaseLabel($0), Double(max(0, $0.ageMs)) / 1000) }),
            .gauge("coinwatch_cluster_lease_valid_seconds",
                   help: "Seconds this node may still act on the lease without another renewal.",
                   leases.map { MetricSample(leaseLabel($0), Double(max(0, $0.validForMs)) / 1000) }),
            .gauge("coinwatch_cluster_settings_lag",
                   help: "Settings changes the replicated bucket still had for this node when it last read one.",
                   [MetricSample([], settingsLag)]),
            .gauge("coinwatch_cluster_settings_revision", help: "The settings bucket's revision this node has read up to.",
                   [MetricSample([], settingsRevision)]),
            .counter("coinwatch_cluster_settings_conflicts_total",
                     help: "Saves of this node that lost a race to another node's and were run again.",
                     [MetricSample([], settingsConflicts)]),
            .counter("coinwatch_cluster_ticks_published_total", help: "Price ticks this node published on the bus.",
                     [MetricSample([], ticksPublished)]),
            .counter("coinwatch_cluster_ticks_received_total", help: "Price ticks this node received from the bus.",
                     [MetricSample([], ticksReceived)]),
            .counter("coinwatch_cluster_publish_failures_total",
                     help: "Price ticks the bus could not publish, and asynchronous JetStream writes that failed.", [MetricSample([], publishFailures)]),
            .counter("coinwatch_cluster_stale_ticks_dropped_total",
                     help: "Price ticks dropped for reaching the bus or a node later than the price max age (a partition).",
                     [MetricSample([], staleTicksDropped)]),
        ]
    }
}

extension ClusterNode {
    /// The node's collector for the metrics registry: each scrape reads `status` (atomics and a short lock).
    public var metricsCollector: any MetricsCollector {
        MetricsClosure { [self] in status.metricFamilies }
    }
}
