/// What a node says about its part in the cluster: for health, `coinwatch cluster` and metrics.
public struct ClusterStatus: Sendable, Equatable {
    public struct LeaseState: Sendable, Equatable {
        public var key: String
        /// The fencing token: the revision of the holder's last write.
        public var revision: UInt64
        /// Since the lease was taken.
        public var ageMs: Int64
        /// How much longer the node may act on it without another renewal.
        public var validForMs: Int64
    }

    public var nodeID = ""
    public var servers: [String] = []
    /// `connected`, `reconnecting`, `disconnected`, `closed`.
    public var natsState = "connecting"
    public var connectedServer = ""
    public var reconnects = 0
    public var leases: [LeaseState] = []
    /// Whether this node runs the live feed now.
    public var runsFeed = false
    /// Shards whose alerts this node evaluates and delivers.
    public var ownedShards: [Int] = []
    /// Node ids with a live entry in the nodes bucket, this one included.
    public var members: [String] = []
    /// How many of the settings bucket's values were still to come when this node last read one (the consumer's
    /// pending count then): 0 once caught up. A node cut off from NATS keeps its last value; its NATS state says
    /// it is cut off.
    public var settingsLag: UInt64 = 0
    /// The settings bucket's revision this node has read up to.
    public var settingsRevision: UInt64 = 0
    /// Saves of this node that lost a race to another node's and were run again.
    public var settingsConflicts = 0
    public var ticksPublished = 0
    public var ticksReceived = 0
    public var publishFailures = 0
    /// Ticks dropped for having waited longer than the bus's bound (a partition, a stalled library).
    public var staleTicksDropped = 0

    public init() {}
}
