public import CoinWatchProto

extension ClusterStatus {
    /// The status as `Health/Check` carries it (`HealthCheckResponse.cluster`).
    public var health: V1.ClusterHealth {
        var health = V1.ClusterHealth()
        health.nodeID = nodeID
        health.natsState = natsState
        health.natsServer = connectedServer
        health.members = members
        health.ownedShards = ownedShards.reduce(UInt64(0)) { $0 | (1 << UInt64($1)) }
        health.runsFeed = runsFeed
        health.leases = leases.map { lease in
            var message = V1.ClusterLease()
            message.key = lease.key
            message.ageMs = UInt64(max(0, lease.ageMs))
            message.validForMs = UInt64(max(0, lease.validForMs))
            message.token = lease.revision
            return message
        }
        health.settingsRevision = settingsRevision
        health.settingsLag = settingsLag
        return health
    }
}
