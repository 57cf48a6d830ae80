import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchService
import Dispatch
import Synchronization

/// StreamAlerts on any node: the alerts this node fires go to `coinwatch.alerts.<NN>` (core NATS, the device's
/// shard), and what other nodes fired is delivered to this node's StreamAlerts calls of the device; each such
/// delivery is told back on `coinwatch.alerts.delivered.<NN>`, so the owner's outbox entry leaves as if its own call
/// had taken it (`AlertService.deliveredElsewhere`: the device's next call on the owner is not sent it again). And the outbox
/// survives its node: every change of this node's outbox is written to the alerts bucket
/// (`out.<NN>.<device>.<SYMBOL>`, an empty value once the entry is gone), and a node that takes shard NN over reads
/// `out.<NN>.>` back into its own outbox (`restore`).
///
/// Push registrations follow the same way: each RegisterDevice or UnregisterDevice this node answered is written to
/// the devices bucket (`coinwatch-devices`, one key per device, an empty value once unregistered), and
/// `cw-cluster-devices` (a `BucketFollower`) hands every node's to the alert service
/// (`AlertService.applyReplicatedRegistration`), so the node owning a device's shard has its token whichever node
/// the device registered on. The last value the bucket holds wins on every node.
///
/// Two threads of its own, so the alert thread never waits for the network: `cw-cluster-arel` publishes what
/// `fired` queued (flushed after each batch, as the price bus does), `cw-cluster-arcv` reads the subscription and
/// hands each alert to `AlertService.deliverRelayed`, which skips those of devices this node fires for (it
/// delivered them itself). Core NATS: an alert published while a node is cut off does not reach it, as a tick
/// does not; the outbox and APNs, which are the owner's, are what carries an alert to a device that was away.
final class ClusterAlertRelay: AlertRelay, @unchecked Sendable {
    // @unchecked Sendable: `subscription` is set once in `start` before the threads start; the rest is immutable,
    // atomic or behind a Mutex.
    let connection: NATSConnection
    let jetStream: JetStream
    /// The alerts bucket, where the outbox's copy lives.
    let bucket: KeyValueBucket
    /// The devices bucket, where the push registrations' copy lives.
    let devices: KeyValueBucket
    private var devicesFollower: BucketFollower!
    /// Weak: the alert service relays through this object and so owns it (`AlertService.relay`); a strong
    /// reference back would keep both, and the NATS connection, alive after everyone else let them go.
    weak let alerts: AlertService?
    let logger: Logger
    /// What the publisher thread sends, in order: an alert or a delivery notice on the relay's subjects (core NATS),
    /// or an outbox entry to the bucket (JetStream, acknowledged asynchronously).
    private enum Outgoing {
        case alert(subject: String, bytes: [UInt8])
        case notice(subject: String, bytes: [UInt8])
        case outbox(subject: String, bytes: [UInt8])
        case registration(subject: String, bytes: [UInt8])
    }
    private let queue = PublisherQueue<Outgoing>(limit: ClusterAlertRelay.queueLimit)
    private let stopping = Atomic<Bool>(false)
    private let threadsDone = DispatchGroup()
    private var subscription: NATSSubscription?
    let published = Atomic<Int>(0)
    let received = Atomic<Int>(0)

    /// Alerts waiting to be published; past this many (NATS unreachable for long) the oldest are dropped, as the
    /// owner's outbox still holds them.
    static let queueLimit = 10_000

    init(
        connection: NATSConnection, jetStream: JetStream, bucket: KeyValueBucket, devices: KeyValueBucket,
        alerts: AlertService, logger: Logger
    ) {
        self.connection = connection
        self.jetStream = jetStream
        self.bucket = bucket
        self.devices = devices
        self.alerts = alerts
        self.logger = logger
        devicesFollower = BucketFollower(bucket: devices, threadName: "cw-cluster-devices") { [weak self] message in
            self?.handRegistration(message)
        }
    }

    func start() throws(ClusterError) {
        // The registrations every node took, before this node serves (blocks until they were handed over).
        try devicesFollower.start()
        let subscription = try connection.subscribe(ClusterLayout.alertSubjects)
        try connection.flush(timeoutMs: 5_000)
        self.subscription = subscription
        threadsDone.enter()
        threadsDone.enter()
        NamedThread.start(name: "cw-cluster-arel") { [self] in
            runPublisher()
            threadsDone.leave()
        }
        NamedThread.start(name: "cw-cluster-arcv") { [self] in
            runReceiver(subscription)
            threadsDone.leave()
        }
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        queue.stop()
        subscription?.close()
        threadsDone.wait()
        devicesFollower.stop()
    }

    // MARK: AlertRelay (the alert thread)

    func fired(_ alert: V1.Alert, device: DeviceID) {
        enqueue([.alert(subject: ClusterLayout.alertSubject(shard: AlertShards.shard(of: device)), bytes: alert.serializedBytes())])
    }

    /// An event loop, after a relayed alert reached a call here: a notice for the owner (the alert itself, so the
    /// owner removes exactly that entry and not a newer one). Core NATS: a lost notice costs one duplicate pending
    /// delivery, as before notices existed.
    func deliveredHere(_ alert: V1.Alert, device: DeviceID) {
        enqueue([.notice(subject: ClusterLayout.deliveredSubject(shard: AlertShards.shard(of: device)), bytes: alert.serializedBytes())])
    }

    func outboxChanged(_ entries: [(device: DeviceID, symbol: Symbol, alert: V1.Alert?)]) {
        enqueue(entries.map { entry in
            let key = ClusterLayout.outboxKey(shard: AlertShards.shard(of: entry.device), device: entry.device.rawValue,
                                              symbol: entry.symbol.rawValue)
            return .outbox(subject: bucket.subject(key), bytes: entry.alert?.serializedBytes() ?? [])
        })
    }

    func registrationsChanged(_ entries: [(device: DeviceID, registration: V1.DeviceRegistration?)]) {
        enqueue(entries.map { entry in
            .registration(subject: devices.subject(ClusterLayout.keyToken(entry.device.rawValue)),
                          bytes: entry.registration?.serializedBytes() ?? [])
        })
    }

    /// `cw-cluster-devices`: a registration some node stored (this one's included, which changes nothing here).
    private func handRegistration(_ message: NATSMessage) {
        guard let device = devicesFollower.device(of: message) else {
            logger.warning("a devices key that names no device", ["subject": message.subject])
            return
        }
        guard !message.data.isEmpty else {
            alerts?.applyReplicatedRegistration(device, nil)
            return
        }
        guard let registration = try? V1.DeviceRegistration(serializedBytes: message.data),
            registration.deviceID == device.rawValue
        else {
            logger.warning("a device registration that does not decode", ["device": device.rawValue])
            return
        }
        alerts?.applyReplicatedRegistration(device, registration)
    }

    private func enqueue(_ items: [Outgoing]) {
        queue.append(contentsOf: items)
    }

    // MARK: Restoring (the control thread)

    /// Reads the outbox entries other nodes kept for `shards` and hands them to the alert service; blocks for the
    /// bucket's reads (the control thread's, after it took the shards' leases).
    func restore(shards: Set<Int>) {
        var restored: [V1.Alert] = []
        for shard in shards.sorted() {
            do {
                for entry in try bucket.entries(matching: ClusterLayout.outboxFilter(shard: shard)) where !entry.value.isEmpty {
                    if let alert = try? V1.Alert(serializedBytes: entry.value) { restored.append(alert) }
                }
            } catch {
                logger.warning("outbox of a taken shard not readable", ["shard": "\(shard)", "error": error.message])
            }
        }
        if !restored.isEmpty { alerts?.restoreOutbox(restored) }
    }

    // MARK: Threads

    private func runPublisher() {
        var batch: [Outgoing] = []
        while true {
            guard queue.take(into: &batch) else {
                if queue.isStopping { return }
                continue
            }
            for item in batch {
                do {
                    switch item {
                    case .alert(let subject, let bytes):
                        try connection.publish(subject, bytes)
                        published.add(1, ordering: .relaxed)
                    case .notice(let subject, let bytes):
                        try connection.publish(subject, bytes)
                    case .outbox(let subject, let bytes), .registration(let subject, let bytes):
                        try jetStream.publishAsync(subject, bytes)
                    }
                } catch {
                    logger.debug("alert not relayed", ["error": error.message])
                }
            }
            batch.removeAll(keepingCapacity: true)
            // Written now rather than when the library's flusher thread gets to it (see ClusterPriceBus).
            try? connection.flush(timeoutMs: 1_000)
        }
    }

    private func runReceiver(_ subscription: NATSSubscription) {
        while !stopping.load(ordering: .relaxed) {
            let message: NATSMessage?
            do {
                message = try subscription.next(timeoutMs: 200)
            } catch {
                if error.code == .closed { return }
                continue
            }
            guard let message, let alert = try? V1.Alert(serializedBytes: message.data) else { continue }
            if message.subject.hasPrefix(ClusterLayout.deliveredPrefix) {
                alerts?.deliveredElsewhere(alert)
            } else {
                received.add(1, ordering: .relaxed)
                alerts?.deliverRelayed(alert)
            }
        }
    }
}
