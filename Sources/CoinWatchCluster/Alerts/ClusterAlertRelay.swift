import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchService
import Dispatch
import Synchronization

/// StreamAlerts on any node: the alerts this node fires go to `coinwatch.alerts.<NN>` (core NATS, the device's
/// shard), and what other nodes fired is delivered to this node's StreamAlerts calls of the device.
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
    let alerts: AlertService
    let logger: Logger
    private let queue = Mutex<(alerts: [(subject: String, bytes: [UInt8])], asleep: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let threadsDone = DispatchGroup()
    private var subscription: NATSSubscription?
    let published = Atomic<Int>(0)
    let received = Atomic<Int>(0)

    /// Alerts waiting to be published; past this many (NATS unreachable for long) the oldest are dropped, as the
    /// owner's outbox still holds them.
    static let queueLimit = 10_000

    init(connection: NATSConnection, alerts: AlertService, logger: Logger) {
        self.connection = connection
        self.alerts = alerts
        self.logger = logger
    }

    func start() throws(ClusterError) {
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
        wake.signal()
        subscription?.close()
        threadsDone.wait()
    }

    // MARK: AlertRelay (the alert thread)

    func fired(_ alert: V1.Alert, device: DeviceID) {
        let subject = ClusterLayout.alertSubject(shard: AlertShards.shard(of: device))
        let bytes = alert.serializedBytes()
        let signal = queue.withLock { queue -> Bool in
            queue.alerts.append((subject, bytes))
            if queue.alerts.count > Self.queueLimit { queue.alerts.removeFirst(queue.alerts.count - Self.queueLimit) }
            defer { queue.asleep = false }
            return queue.asleep
        }
        if signal { wake.signal() }
    }

    // MARK: Threads

    private func runPublisher() {
        while !stopping.load(ordering: .relaxed) {
            let batch = queue.withLock { queue -> [(subject: String, bytes: [UInt8])] in
                if queue.alerts.isEmpty { queue.asleep = true }
                defer { queue.alerts.removeAll(keepingCapacity: true) }
                return queue.alerts
            }
            if batch.isEmpty {
                wake.wait()
                continue
            }
            for (subject, bytes) in batch {
                do {
                    try connection.publish(subject, bytes)
                    published.add(1, ordering: .relaxed)
                } catch {
                    logger.debug("alert not relayed", ["subject": subject, "error": error.message])
                }
            }
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
            received.add(1, ordering: .relaxed)
            alerts.deliverRelayed(alert)
        }
    }
}
