import CoinWatchMetrics
import Testing
@testable import CoinWatchCluster

@Suite struct ClusterStatusMetricsTests {
    static func status() -> ClusterStatus {
        var status = ClusterStatus()
        status.nodeID = "node-\"b\""
        status.natsState = "reconnecting"
        status.reconnects = 2
        status.members = ["a", "node-\"b\"", "c"]
        status.ownedShards = [3, 7, 60]
        status.runsFeed = true
        status.leases = [
            .init(key: "shard.07", revision: 41, ageMs: 12_500, validForMs: 1_250),
            .init(key: "feed.sim", revision: 9, ageMs: -5, validForMs: -1),
        ]
        status.settingsLag = 4
        status.settingsRevision = 1_234
        status.settingsConflicts = 1
        status.ticksPublished = 10
        status.ticksReceived = 30
        status.publishFailures = 0
        status.staleTicksDropped = 7
        return status
    }

    @Test("the node's status as Prometheus lines: escaped id, one-hot NATS state, a series per lease")
    func lines() {
        let text = PrometheusText.render(Self.status().metricFamilies)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for expected in [
            #"coinwatch_cluster_node_info{node_id="node-\"b\""} 1"#,
            #"coinwatch_cluster_nats_state{state="connecting"} 0"#,
            #"coinwatch_cluster_nats_state{state="reconnecting"} 1"#,
            #"coinwatch_cluster_nats_state{state="closed"} 0"#,
            "coinwatch_cluster_nats_reconnects_total 2",
            "coinwatch_cluster_members 3",
            "coinwatch_cluster_owned_shards 3",
            "coinwatch_cluster_runs_feed 1",
            #"coinwatch_cluster_lease_age_seconds{lease="shard.07"} 12.5"#,
            #"coinwatch_cluster_lease_valid_seconds{lease="shard.07"} 1.25"#,
            // A clock read across a renewal can make an age or a validity negative for a moment: never shown so.
            #"coinwatch_cluster_lease_age_seconds{lease="feed.sim"} 0"#,
            #"coinwatch_cluster_lease_valid_seconds{lease="feed.sim"} 0"#,
            "coinwatch_cluster_settings_lag 4",
            "coinwatch_cluster_settings_revision 1234",
            "coinwatch_cluster_settings_conflicts_total 1",
            "coinwatch_cluster_ticks_published_total 10",
            "coinwatch_cluster_ticks_received_total 30",
            "coinwatch_cluster_publish_failures_total 0",
            "coinwatch_cluster_stale_ticks_dropped_total 7",
            "# TYPE coinwatch_cluster_nats_reconnects_total counter",
            "# TYPE coinwatch_cluster_owned_shards gauge",
        ] {
            #expect(lines.contains(expected), "\(expected)")
        }
    }

    @Test("every family exists before the node has a lease or a member, at 0")
    func fresh() {
        let families = ClusterStatus().metricFamilies
        #expect(families.count == 15)
        let state = families.first { $0.name == "coinwatch_cluster_nats_state" }
        #expect(state?.samples.map(\.value) == [1, 0, 0, 0, 0], "a node starts connecting")
        for family in families where !family.name.hasPrefix("coinwatch_cluster_lease_") && family.name != "coinwatch_cluster_node_info"
            && family.name != "coinwatch_cluster_nats_state"
        {
            #expect(family.samples.map(\.value) == [0], "\(family.name)")
        }
    }
}
