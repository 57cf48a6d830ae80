extension ClusterNode {
    /// How this node joins the cluster (`coinwatchd --cluster …` and the options beside it).
    public struct Configuration: Sendable {
        /// `nats://HOST:PORT` (or `tls://…`) URLs of NATS servers; one is enough, the others are learnt.
        public var servers: [String]
        /// This node's name in leases, logs and `coinwatch cluster`: unique in the cluster.
        public var nodeID: String
        /// Where clients reach this node (`HOST:PORT`), told to the others for `coinwatch cluster`.
        public var advertisedAddress = ""
        /// Replicas of the streams and buckets this node creates when they do not exist yet (1 or 3; an existing
        /// cluster's are kept).
        public var replicas = 1
        public var user: String?
        public var password: String?
        public var token: String?
        public var credentialsFile: String?
        public var caFile: String?
        public var certificateFile: String?
        public var keyFile: String?
        /// How long a lease lasts without renewal (docs/SCALING.md: the failover window is about this plus 1 s).
        public var leaseTTL: Duration = .seconds(6)
        /// How often this node writes its entry in the nodes bucket: a third of the lease TTL, so that a node's
        /// entry (kept for three heartbeats) lapses when its leases do.
        public var heartbeat: Duration { leaseTTL / 3 }

        public init(servers: [String], nodeID: String) {
            self.servers = servers
            self.nodeID = nodeID
        }

        public func validate() throws(ClusterError) {
            guard !servers.isEmpty else {
                throw ClusterError(code: .invalidArgument, message: "--cluster: no NATS server given")
            }
            for server in servers where !(server.hasPrefix("nats://") || server.hasPrefix("tls://")) {
                throw ClusterError(
                    code: .invalidArgument,
                    message: "--cluster: '\(NATSConnection.redacted(server))' is not a nats://HOST:PORT or tls://HOST:PORT URL")
            }
            guard !nodeID.isEmpty, nodeID.utf8.count <= 64 else {
                throw ClusterError(code: .invalidArgument, message: "--node-id: must be 1 to 64 characters")
            }
            guard replicas == 1 || replicas == 3 || replicas == 5 else {
                throw ClusterError(code: .invalidArgument, message: "--cluster-replicas: must be 1, 3 or 5 (got \(replicas))")
            }
            guard leaseTTL >= .seconds(1) else {
                throw ClusterError(code: .invalidArgument, message: "--lease-ttl: must be at least 1s")
            }
            if certificateFile != nil && keyFile == nil {
                throw ClusterError(code: .invalidArgument, message: "--cluster-cert needs --cluster-key")
            }
        }
    }
}
