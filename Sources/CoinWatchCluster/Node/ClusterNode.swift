public import CoinWatchAuth
public import CoinWatchLogging
public import CoinWatchService
import CoinWatchCore
import CoinWatchProto
import CoinWatchRPC
import Dispatch
import Synchronization

/// This coinwatchd as one node of a cluster: its NATS connection, the price bus, its leases and what it tells the
/// other nodes about itself.
///
/// Life: `connect` (before the service opens, so the settings can be replicated from the start), `attach` the
/// opened service (the price bus subscribes and reads the snapshot), `start` (the control thread: leases,
/// membership), `close`. Nothing here runs on an event loop: the control thread `cw-cluster` makes every call that
/// waits for NATS, and the connection's own callbacks only queue events for it.
public final class ClusterNode: @unchecked Sendable {
    // @unchecked Sendable: `service`, `bus` and `feed` are set in `attach` before the control thread starts and only
    // read afterwards; the control thread's state (`leases`, `runningFeed`) is touched by it alone; shared state is
    // behind `statusCell` and atomics.

    public let configuration: Configuration
    let logger: Logger
    let connection: NATSConnection
    let jetStream: JetStream
    let buckets: Buckets
    /// Connection events, queued by nats.c's event thread for the control thread.
    private let inbox = EventInbox()
    private var wake: DispatchSemaphore { inbox.wake }
    private let stopping = Atomic<Bool>(false)
    private let controlDone = DispatchSemaphore(value: 0)
    private let statusCell = Mutex(ClusterStatus())
    private var service: CoinWatchService?
    private var bus: ClusterPriceBus?
    private var settings: ClusterSettings?
    private var credentials: ClusterCredentials?
    private var alertRelay: ClusterAlertRelay?
    private var makeFeed: (@Sendable () throws -> any PriceFeed)?
    private var feedName = ""
    private var runningFeed: (any PriceFeed)?
    private var leases: LeaseKeeper?
    /// Control thread: the live members as last read from the nodes bucket.
    private var members: [String] = []
    /// Control thread: owned, assigned and member counts as last logged.
    private var loggedShards: [Int] = []
    let shards = ClusterShards()
    private var started = false

    /// The buckets every node uses.
    struct Buckets {
        let lastPrices: KeyValueBucket
        let settings: KeyValueBucket
        let credentials: KeyValueBucket
        let devices: KeyValueBucket
        let leases: KeyValueBucket
        let alerts: KeyValueBucket
        let nodes: KeyValueBucket
    }

    /// Connects to NATS and makes sure the cluster's streams and buckets exist (creating them with this node's
    /// replica count when it is the first). Blocks for up to a few seconds per server: call it at start-up.
    public init(configuration: Configuration, logger: Logger) throws(ClusterError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        let inbox = self.inbox
        var options = NATSConnection.Options(servers: configuration.servers)
        options.name = "coinwatchd \(configuration.nodeID)"
        options.user = configuration.user
        options.password = configuration.password
        options.token = configuration.token
        options.credentialsFile = configuration.credentialsFile
        options.caFile = configuration.caFile
        options.certificateFile = configuration.certificateFile
        options.keyFile = configuration.keyFile
        // Weak: the connection's event box outlives the node (nats.c may call back after the connection is
        // destroyed), and would otherwise keep the inbox, its semaphore and any queued events for good.
        connection = try NATSConnection(options: options) { [weak inbox] event in
            // A library thread: queue the event for the control thread, nothing else.
            inbox?.post(event)
        }
        jetStream = try JetStream(connection: connection)
        let replicas = configuration.replicas
        // A JetStream cluster that is just starting (or electing a leader) answers with timeouts or "not
        // available" for a few seconds: keep trying, bounded, before giving up on joining.
        let deadline = MonotonicClock.nanoseconds() + Self.setupPatience.inNanoseconds
        var prepared: Buckets?
        while prepared == nil {
            do throws(ClusterError) {
                prepared = try Self.prepare(jetStream, configuration)
            } catch {
                guard error.code != .invalidArgument, MonotonicClock.nanoseconds() < deadline else { throw error }
                logger.warning("JetStream not ready; trying again", ["error": error.message])
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 1)
            }
        }
        buckets = prepared!
        statusCell.withLock { status in
            status.nodeID = configuration.nodeID
            status.servers = configuration.servers.map(NATSConnection.redacted)
        }
        logger.info("joined the cluster", [
            "node": configuration.nodeID, "nats": connection.connectedURL, "replicas": "\(replicas)",
        ])
    }

    deinit {
        close()
    }

    /// How long joining waits for JetStream to create or find the streams and buckets.
    static let setupPatience: Duration = .seconds(60)

    /// Makes sure the price stream and the buckets exist, creating them with this node's replica count when it is
    /// the first.
    private static func prepare(_ jetStream: JetStream, _ configuration: Configuration) throws(ClusterError) -> Buckets {
        let replicas = configuration.replicas
        try jetStream.ensureStream(.init(
            name: ClusterLayout.priceStream, subjects: [ClusterLayout.priceSubjects],
            maxAgeNs: ClusterLayout.priceStreamMaxAgeNs, replicas: replicas))
        return Buckets(
            lastPrices: try jetStream.keyValue(.init(name: ClusterLayout.lastPricesBucket, replicas: replicas)),
            settings: try jetStream.keyValue(.init(name: ClusterLayout.settingsBucket, replicas: replicas)),
            credentials: try jetStream.keyValue(.init(name: ClusterLayout.credentialsBucket, replicas: replicas)),
            devices: try jetStream.keyValue(.init(name: ClusterLayout.devicesBucket, replicas: replicas)),
            leases: try jetStream.keyValue(.init(
                name: ClusterLayout.leasesBucket, ttlNs: configuration.leaseTTL.inNanoseconds, replicas: replicas)),
            alerts: try jetStream.keyValue(.init(name: ClusterLayout.alertsBucket, replicas: replicas)),
            nodes: try jetStream.keyValue(.init(
                name: ClusterLayout.nodesBucket, ttlNs: 3 * configuration.heartbeat.inNanoseconds, replicas: replicas)))
    }

    /// Wires the opened service in: the hub's publishes go to the bus and the bus feeds the hub, after the last
    /// prices were read; the credentials bucket becomes the store of record of `credentials` (the server's, when
    /// it checks credentials) and the settings bucket the settings store's, and what they hold is read in; the
    /// alerts this node fires are relayed to the others' StreamAlerts calls, and theirs to this node's. `makeFeed`
    /// makes a fresh feed each time this node takes the feed's lease (a feed runs once).
    public func attach(
        _ service: CoinWatchService, credentials credentialStore: CredentialStore? = nil, feedName: String,
        makeFeed: @escaping @Sendable () throws -> any PriceFeed
    ) throws(ClusterError) {
        self.service = service
        self.makeFeed = makeFeed
        self.feedName = feedName
        let bus = ClusterPriceBus(
            connection: connection, jetStream: jetStream, lastPrices: buckets.lastPrices, hub: service.hub,
            logger: logger)
        try bus.start()
        self.bus = bus
        // Credentials before settings: a save replicated from now on may carry a device's first secret.
        var credentials: ClusterCredentials?
        if let credentialStore {
            credentials = ClusterCredentials(bucket: buckets.credentials, credentials: credentialStore, logger: logger)
            try credentials!.start()
            self.credentials = credentials
        }
        let settings = ClusterSettings(
            bucket: buckets.settings, store: service.settings, credentials: credentials, logger: logger)
        try settings.start()
        self.settings = settings
        service.alerts.fireOnly(where: shards)
        let alertRelay = ClusterAlertRelay(
            connection: connection, jetStream: jetStream, bucket: buckets.alerts, devices: buckets.devices,
            alerts: service.alerts, logger: logger)
        try alertRelay.start()
        self.alertRelay = alertRelay
        service.alerts.relay(through: alertRelay)
        service.health.reportCluster { [weak self] in self?.status.health ?? V1.ClusterHealth() }
    }

    /// Starts the control thread: leases (the feed's), this node's entry in the nodes bucket, connection events.
    public func start() {
        guard !started else { return }
        started = true
        leases = LeaseKeeper(bucket: buckets.leases, nodeID: configuration.nodeID, ttl: configuration.leaseTTL)
        NamedThread.start(name: "cw-cluster") { [self] in
            runControl()
            controlDone.signal()
        }
    }

    /// Stops the feed (if this node runs it), the control thread and the bus, then closes the connection. The
    /// node's leases are left to expire. Idempotent.
    public func close() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        if started {
            wake.signal()
            controlDone.wait()
        }
        bus?.stop()
        settings?.stop()
        credentials?.stop()
        alertRelay?.stop()
        connection.close()
        statusCell.withLock { $0.natsState = "closed" }
    }

    /// What `coinwatch cluster`, health and metrics show.
    public var status: ClusterStatus {
        var status = statusCell.withLock { $0 }
        status.natsState = connection.state.description
        status.connectedServer = connection.connectedURL
        status.reconnects = connection.events.reconnects.load(ordering: .relaxed)
        // What the alert gate says now, not what the control thread last saw: the two differ while the control
        // thread waits on a NATS call past a lease's deadline.
        status.ownedShards = shards.ownedShards
        if let bus {
            let counters = bus.stats
            status.ticksPublished = counters.published
            status.ticksReceived = counters.received
            status.publishFailures = counters.publishFailures + jetStream.counters.failed.load(ordering: .relaxed)
            status.staleTicksDropped = counters.staleDropped
        }
        if let settings {
            status.settingsLag = settings.pendingAtLastRead
            status.settingsRevision = settings.lastRead
            status.settingsConflicts = settings.conflicts.load(ordering: .relaxed)
        }
        return status
    }

    static func feedLeaseKey(_ name: String) -> String { "feed.\(ClusterLayout.keyToken(name))" }

    // MARK: The control thread

    private func runControl() {
        var nextHeartbeat: Int64 = 0
        let tickNs = max(configuration.leaseTTL.inNanoseconds / 12, 50_000_000)
        while !stopping.load(ordering: .relaxed) {
            for event in inbox.takeAll() {
                handle(event)
            }
            let now = MonotonicClock.nanoseconds()
            // Cut off from NATS, every call would wait out its timeout: leases only lapse by the clock then.
            let connected = connection.state == .connected
            if connected && now >= nextHeartbeat {
                nextHeartbeat = now + configuration.heartbeat.inNanoseconds
                heartbeat()
            }
            if let leases {
                leases.want(wantedLeases())
                apply(leases.tick(connected: connected))
                // Renewals move each shard's deadline on (acquisitions and losses were applied above).
                for lease in leases.held.values {
                    if let shard = ClusterShards.shard(ofLeaseKey: lease.key) { shards.hold(shard, until: lease.validUntil) }
                }
                let now = MonotonicClock.nanoseconds()
                let held = leases.held.values.sorted { $0.key < $1.key }.map { lease in
                    ClusterStatus.LeaseState(
                        key: lease.key, revision: lease.revision, ageMs: (now - lease.acquiredAt) / 1_000_000,
                        validForMs: max(0, (lease.validUntil - now) / 1_000_000))
                }
                statusCell.withLock { $0.leases = held }
            }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(tickNs)))
        }
        if let leases { apply(leases.releaseAll()) }
    }

    /// The feed's lease (when this node was given a feed) and the alert shards the live members assign to it.
    /// Nothing until the first membership read succeeded: a node that cannot see the others takes no shard.
    private func wantedLeases() -> Set<String> {
        var wanted = Set<String>()
        if makeFeed != nil, !feedName.isEmpty { wanted.insert(Self.feedLeaseKey(feedName)) }
        guard service != nil, !members.isEmpty else { return wanted }
        for shard in ClusterShards.assigned(to: configuration.nodeID, members: members) {
            wanted.insert(ClusterShards.leaseKey(shard))
        }
        return wanted
    }

    private func handle(_ event: NATSConnection.Event) {
        switch event {
        case .disconnected:
            logger.warning("lost the NATS connection; reconnecting")
        case .reconnected(let url):
            logger.info("reconnected to NATS", ["server": url])
            bus?.connectionCameBack()
        case .closed:
            break
        case .asyncError(let text):
            logger.warning("NATS reported an error", ["error": text])
        }
    }

    private func apply(_ changes: [LeaseKeeper.Change]) {
        for change in changes {
            switch change {
            case .lost(let key, let reason):
                if let shard = ClusterShards.shard(ofLeaseKey: key) {
                    shards.release(shard)
                    logger.debug("shard lease given up", ["lease": key, "reason": reason])
                    continue
                }
                logger.info("lease given up", ["lease": key, "reason": reason])
                if key == Self.feedLeaseKey(feedName), let feed = runningFeed {
                    feed.stop()
                    runningFeed = nil
                    // Health and metrics describe the service's own feed again, which a cluster node never starts.
                    if let own = service?.feed { service?.health.reportFeedSources { own.sourceStats } }
                }
            case .acquired(let lease):
                if let shard = ClusterShards.shard(ofLeaseKey: lease.key) {
                    shards.hold(shard, until: lease.validUntil)
                    continue
                }
                logger.info("lease taken", ["lease": lease.key, "token": "\(lease.revision)"])
                if lease.key == Self.feedLeaseKey(feedName), runningFeed == nil, let makeFeed {
                    do {
                        let feed = try makeFeed()
                        feed.start()
                        runningFeed = feed
                        // Health/Check's sources and the feed metrics describe the feed that runs.
                        service?.health.reportFeedSources { feed.sourceStats }
                    } catch {
                        logger.error("cannot start the feed", ["error": "\(error)"])
                    }
                }
            }
        }
        // Shards taken over: fire what was held back for them over the longest span their previous owner may have
        // stopped firing before this node could start: its leases and its member entry lapse at most a TTL after
        // its last write, this node sees that within a heartbeat (TTL/3) and a tick (TTL/12); plus 1 s of slack.
        var taken = Set<Int>()
        for case .acquired(let lease) in changes {
            if let shard = ClusterShards.shard(ofLeaseKey: lease.key) { taken.insert(shard) }
        }
        if !taken.isEmpty, let service {
            let spanMs = configuration.leaseTTL.inMilliseconds * 17 / 12 + 1_000
            service.alerts.shardsTaken(taken, sinceMs: WallClock.milliseconds() - spanMs)
            // And what their previous owner still had pending for devices that were away.
            alertRelay?.restore(shards: taken)
        }
        let owned = shards.ownedShards
        let assigned = members.isEmpty ? 0 : ClusterShards.assigned(to: configuration.nodeID, members: members).count
        let summary = [owned.count, assigned, members.count]
        if summary != loggedShards {
            loggedShards = summary
            logger.info("alert shards owned", [
                "count": "\(owned.count)", "assigned": "\(assigned)", "members": "\(members.count)",
            ])
        }
        statusCell.withLock { $0.runsFeed = runningFeed != nil }
    }

    private func heartbeat() {
        let text = "listen=\(configuration.advertisedAddress) feed=\(runningFeed != nil)"
        do {
            try buckets.nodes.put("node.\(ClusterLayout.keyToken(configuration.nodeID))", Array(text.utf8))
            let members = try buckets.nodes.entries(matching: "node.>").compactMap { entry in
                ClusterLayout.text(ofKeyToken: String(entry.key.dropFirst("node.".count)))
            }
            if members.sorted() != self.members {
                logger.info("cluster members", ["members": members.sorted().joined(separator: ",")])
            }
            self.members = members.sorted()
            statusCell.withLock { $0.members = self.members }
        } catch {
            logger.warning("heartbeat failed", ["error": error.message])
        }
    }
}

/// Events handed from a library thread to the control thread.
final class EventInbox: Sendable {
    let wake = DispatchSemaphore(value: 0)
    private let events = Mutex<[NATSConnection.Event]>([])

    func post(_ event: NATSConnection.Event) {
        events.withLock { $0.append(event) }
        wake.signal()
    }

    func takeAll() -> [NATSConnection.Event] {
        events.withLock { events in
            defer { events = [] }
            return events
        }
    }
}
