import CoinWatchCluster
import CoinWatchCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// coinwatchd's cluster options: all of them are inert without `--cluster`.
extension DaemonOptions {
    static let cluster: [OptionSpec] = [
        OptionSpec("cluster", .value(placeholder: "nats://HOST:PORT[,…]"), environment: "COINWATCH_CLUSTER",
                   help: "Run as a node of a cluster on these NATS servers (JetStream): prices, settings and alerts "
                       + "are shared with the other nodes (docs/SCALING.md). Without it: a single node."),
        OptionSpec("node-id", .value(placeholder: "ID"), environment: "COINWATCH_NODE_ID",
                   help: "This node's name in the cluster (default: the host name and the listen port)."),
        OptionSpec("cluster-replicas", .value(placeholder: "N"), environment: "COINWATCH_CLUSTER_REPLICAS", default: "1",
                   help: "Replicas (1, 3 or 5) of the streams and buckets, when this node is the first to create them."),
        OptionSpec("cluster-creds", .value(placeholder: "FILE"), environment: "COINWATCH_CLUSTER_CREDS",
                   help: "NATS credentials file (JWT and NKey seed)."),
        OptionSpec("cluster-user", .value(placeholder: "USER"), environment: "COINWATCH_CLUSTER_USER",
                   help: "NATS user name (with COINWATCH_CLUSTER_PASSWORD)."),
        OptionSpec("cluster-password", .value(placeholder: "PASSWORD"), environment: "COINWATCH_CLUSTER_PASSWORD",
                   help: "NATS password; prefer the environment variable, which ps does not show."),
        OptionSpec("cluster-token", .value(placeholder: "TOKEN"), environment: "COINWATCH_CLUSTER_TOKEN",
                   help: "NATS token; prefer the environment variable."),
        OptionSpec("cluster-ca", .value(placeholder: "FILE"), environment: "COINWATCH_CLUSTER_CA",
                   help: "PEM CA certificates for TLS to NATS (turns TLS on)."),
        OptionSpec("cluster-cert", .value(placeholder: "FILE"), environment: "COINWATCH_CLUSTER_CERT",
                   help: "PEM client certificate for TLS to NATS (with --cluster-key)."),
        OptionSpec("cluster-key", .value(placeholder: "FILE"), environment: "COINWATCH_CLUSTER_KEY",
                   help: "PEM private key of --cluster-cert."),
        OptionSpec("lease-ttl", .value(placeholder: "DURATION"), environment: "COINWATCH_LEASE_TTL", default: "6s",
                   help: "How long a node's leases (live feed, alert shards) last without renewal."),
    ]

    /// The cluster configuration, or nil without `--cluster`.
    static func clusterConfiguration(_ parsed: ParsedArguments, listen: String) throws(UsageError)
        -> ClusterNode.Configuration?
    {
        guard let servers = parsed["cluster"], !servers.isEmpty else { return nil }
        let urls = servers.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        let nodeID = parsed["node-id"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(hostName()):\(listen.split(separator: ":").last ?? "")"
        var configuration = ClusterNode.Configuration(servers: urls, nodeID: nodeID)
        configuration.advertisedAddress = listen
        guard let replicas = Int(parsed["cluster-replicas"]!) else {
            throw UsageError("--cluster-replicas: '\(parsed["cluster-replicas"]!)' is not a whole number")
        }
        configuration.replicas = replicas
        configuration.credentialsFile = parsed["cluster-creds"]
        configuration.user = parsed["cluster-user"]
        configuration.password = parsed["cluster-password"]
        configuration.token = parsed["cluster-token"]
        configuration.caFile = parsed["cluster-ca"]
        configuration.certificateFile = parsed["cluster-cert"]
        configuration.keyFile = parsed["cluster-key"]
        configuration.leaseTTL = try parsed.value("lease-ttl", as: "a duration such as 6s", DurationText.parse)!
        do throws(ClusterError) {
            try configuration.validate()
        } catch {
            throw UsageError(error.message)
        }
        return configuration
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "node" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
