import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchService
import Dispatch
import Synchronization

/// The price bus: what is published on this node goes to NATS once, and what NATS carries goes into this node's hub.
///
/// Two threads of its own, so neither a feed's thread nor an event loop ever waits for the network:
/// - `cw-cluster-pub` takes what `publish` queued and publishes each tick to `coinwatch.prices.<SYMBOL>` with
///   JetStream's asynchronous publish (the replay log stores it; every core subscriber — every node — receives it
///   as the server routes it), then the batch's last tick of each symbol to the last-prices bucket.
/// - `cw-cluster-bus` reads the subscription on `coinwatch.prices.*` and hands what arrived, in arrival order and
///   in batches, to `PriceHub.deliver`. Each stream's sequence is made by the hub, so it stays gapless.
///
/// A batch stays whole across the bus. Each message says how many of its batch follow it
/// (`ClusterLayout.batchLeftHeader`), and the receiver waits up to `batchWaitMs` for them before it delivers. Without
/// that, the receiver woke on a batch's first message while the library was still reading the rest, and a
/// subscriber on another node got a batch in several writes where one on the publishing node got one: measured with
/// 1,000 subscribers at 1,000 ticks/s in batches of 10, the subscribing node sent 7.4 ticks per `sendmsg` against
/// the publishing node's 10. The wait ends at once when the batch is complete; its bound only matters when a
/// publisher's connection breaks mid-batch.
///
/// A tick is news only while it is fresh. One that waited longer than `maxDelayMs` between being handed to the bus
/// and reaching a node — a node cut off from NATS queues what its feed produces, and the library keeps what it was
/// given in its reconnect buffer, all of it published when the connection comes back — is dropped and counted
/// (`staleDropped`): by the publisher while it waits in the bus's queue (nothing is handed to the library while
/// the connection is down), and by every receiver by the hand-off stamp each message carries
/// (`ClusterLayout.sentHeader`). Otherwise a node that reconnects after minutes would set every node's prices back
/// to what they were when it was cut off, and the alert engine would see a crossing between a fresh price and an
/// old one. The bound is the price max age (10 s): the clocks of two nodes differ by far less.
///
/// Before the first live tick is read, the last-prices bucket is read into the hub (a price newer than the one
/// the hub has is delivered as a tick), so a `StreamPrices` call gets a correct snapshot on a node that just
/// started; the same happens after the connection to NATS came back.
final class ClusterPriceBus: PriceUpstream, @unchecked Sendable {
    // @unchecked Sendable: `subscription` is set once in `start` before the threads start; everything else is
    // immutable, atomic or behind `queue`.

    struct Counters: Sendable {
        var published = 0
        var received = 0
        var publishFailures = 0
        var undecodable = 0
        var droppedWhileQueued = 0
        /// Ticks dropped for having waited longer than `maxDelayMs` (here in the queue, or on the way here).
        var staleDropped = 0
    }

    let connection: NATSConnection
    let jetStream: JetStream
    let lastPrices: KeyValueBucket
    /// Weak: the hub routes its publishes through this bus and so owns it (`PriceHub.route`); a strong reference
    /// back would keep both, and the NATS connection, alive after everyone else let them go. Once the hub is gone
    /// there is nothing to deliver to.
    weak let hub: PriceHub?
    let logger: Logger
    /// Ticks waiting for the publisher; past this many (NATS unreachable for long) the oldest are dropped.
    let queueLimit: Int
    /// How old a tick may be when it is published or received; older ones are dropped.
    let maxDelayMs: Int64
    /// How long the receiver waits for the rest of a batch whose first messages arrived.
    let batchWaitMs: Int64
    /// Each tick with the moment (monotonic nanoseconds) it was handed to the bus.
    private let queue: PublisherQueue<(tick: PriceTick, queuedAt: Int64)>
    private let counters = Mutex(Counters())
    private let stopping = Atomic<Bool>(false)
    private let resnapshotDue = Atomic<Bool>(false)
    private let threadsDone = DispatchGroup()
    private var subscription: NATSSubscription?

    init(connection: NATSConnection, jetStream: JetStream, lastPrices: KeyValueBucket, hub: PriceHub, logger: Logger,
         queueLimit: Int = 100_000, maxDelayMs: Int64 = 10_000, batchWaitMs: Int64 = 50) {
        self.connection = connection
        self.jetStream = jetStream
        self.lastPrices = lastPrices
        self.hub = hub
        self.logger = logger
        self.queueLimit = queueLimit
        self.maxDelayMs = maxDelayMs
        self.batchWaitMs = batchWaitMs
        self.queue = PublisherQueue(limit: queueLimit)
    }

    var stats: Counters { counters.withLock { $0 } }

    /// Subscribes, reads the snapshot, routes the hub's publishes here and starts both threads.
    func start() throws(ClusterError) {
        let subscription = try connection.subscribe(ClusterLayout.priceSubjects)
        // The subscription is known to the server once the flush returns: every tick published after this
        // reaches us, so the snapshot read next can only be older than what follows it.
        try connection.flush(timeoutMs: jetStream.waitMs)
        self.subscription = subscription
        loadSnapshot()
        hub?.route(through: self)
        threadsDone.enter()
        threadsDone.enter()
        NamedThread.start(name: "cw-cluster-pub") { [self] in
            runPublisher()
            threadsDone.leave()
        }
        NamedThread.start(name: "cw-cluster-bus") { [self] in
            runReceiver(subscription)
            threadsDone.leave()
        }
    }

    /// After a reconnect: read the last prices again (ticks may have been missed while away).
    func connectionCameBack() {
        resnapshotDue.store(true, ordering: .relaxed)
        queue.wake()
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        queue.stop()
        subscription?.close()
        threadsDone.wait()
    }

    // MARK: Publishing (any thread → cw-cluster-pub)

    func publish(_ ticks: [PriceTick]) {
        let now = MonotonicClock.nanoseconds()
        let dropped = queue.append(contentsOf: ticks.lazy.map { ($0, now) })
        if dropped > 0 { counters.withLock { $0.droppedWhileQueued += dropped } }
    }

    private func runPublisher() {
        var batch: [(tick: PriceTick, queuedAt: Int64)] = []
        while true {
            // While the connection is down nothing is handed to the library (its reconnect buffer would publish
            // it however old on reconnecting): the ticks wait in the queue, where their age is checked. The
            // control thread wakes this one when the connection comes back (`connectionCameBack`); the timeout
            // only bounds a missed event.
            if connection.state != .connected && !queue.isStopping {
                queue.pause(timeout: .seconds(1))
                continue
            }
            guard queue.take(into: &batch) else {
                if queue.isStopping { return }
                continue
            }
            let oldest = MonotonicClock.nanoseconds() - maxDelayMs * 1_000_000
            let stale = batch.count
            batch.removeAll { $0.queuedAt < oldest }
            let sent = String(WallClock.milliseconds())
            var latest: [String: [UInt8]] = [:]
            var failures = 0
            for (index, (tick, _)) in batch.enumerated() {
                let bytes = tick.update.serializedBytes()
                let headers = [
                    (ClusterLayout.sentHeader, sent), (ClusterLayout.batchLeftHeader, String(batch.count - 1 - index)),
                ]
                do {
                    try jetStream.publishAsync(ClusterLayout.priceSubject(tick.symbol.rawValue), bytes, headers: headers)
                } catch {
                    failures += 1
                }
                latest[tick.symbol.rawValue] = bytes
            }
            for (symbol, bytes) in latest {
                do {
                    try jetStream.publishAsync(lastPrices.subject(symbol), bytes, headers: [(ClusterLayout.sentHeader, sent)])
                } catch {
                    failures += 1
                }
            }
            // Written now rather than when the library's flusher thread gets to it: measured, a tick otherwise
            // waited about a millisecond in the library's buffer (1 subscriber, p50 1.6 → 0.74 ms through the
            // bus). The flush's round trip blocks only this thread, and what is queued meanwhile goes in the next
            // batch, so a flood loses nothing (742,738 deliveries/s beside 652,833 without it, one run each).
            try? connection.flush(timeoutMs: 1_000)
            let published = batch.count
            counters.withLock { counters in
                counters.published += published - min(failures, published)
                counters.publishFailures += failures
                counters.staleDropped += stale - published
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    // MARK: Receiving (cw-cluster-bus)

    private func runReceiver(_ subscription: NATSSubscription) {
        var batch: [PriceTick] = []
        while !stopping.load(ordering: .relaxed) {
            if resnapshotDue.exchange(false, ordering: .relaxed) {
                loadSnapshot()
            }
            let first: NATSMessage?
            do {
                first = try subscription.next(timeoutMs: 200)
            } catch {
                if error.code == .closed { return }
                continue
            }
            guard let first else { continue }
            var undecodable = 0
            var stale = 0
            append(first, to: &batch, undecodable: &undecodable, stale: &stale)
            // Everything already queued, and the rest of the last message's batch, goes to the hub in one delivery.
            var more = first.batchLeft > 0
            while batch.count < 1_024, let next = try? subscription.next(timeoutMs: more ? batchWaitMs : 0) {
                append(next, to: &batch, undecodable: &undecodable, stale: &stale)
                more = next.batchLeft > 0
            }
            let count = batch.count
            counters.withLock { counters in
                counters.received += count
                counters.undecodable += undecodable
                counters.staleDropped += stale
            }
            if !batch.isEmpty { hub?.deliver(batch) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    private func append(_ message: NATSMessage, to batch: inout [PriceTick], undecodable: inout Int, stale: inout Int) {
        if let sent = message.sentMs, WallClock.milliseconds() - sent > maxDelayMs {
            stale += 1
            return
        }
        if let tick = Self.decode(message.data) {
            batch.append(tick)
        } else {
            undecodable += 1
        }
    }

    /// A bus message (or last-prices entry): the whole tick as a `PriceUpdate` (`PriceTick.update`), so a
    /// symbol's stale flag and source count reach every node. One written as a `Tick` reads the same, unstale.
    static func decode(_ bytes: [UInt8]) -> PriceTick? {
        guard let message = try? V1.PriceUpdate(serializedBytes: bytes) else { return nil }
        return try? PriceTick(validating: message, field: "tick")
    }

    // MARK: Snapshot

    /// Whether the bucket's `tick` tells a hub holding `current` something new: a later price, or the same price
    /// turned stale. A fresh tick at the time of a stale one is older news than the stale one and is not applied.
    static func snapshotTick(_ tick: PriceTick, supersedes current: PriceTick) -> Bool {
        tick.timeMs > current.timeMs || (tick.timeMs == current.timeMs && tick.isStale && !current.isStale)
    }

    /// Reads every symbol's last tick from the bucket and delivers those newer than what the hub has, and those
    /// that say a symbol the hub still has as fresh turned stale (a stale tick keeps the last price's time, so a
    /// node that was cut off while its symbol went stale learns it here).
    func loadSnapshot() {
        guard let hub else { return }
        let entries: [KVEntry]
        do {
            entries = try lastPrices.entries()
        } catch {
            logger.warning("cannot read the last prices", ["error": error.message])
            return
        }
        var newer: [PriceTick] = []
        for entry in entries {
            guard let tick = Self.decode(entry.value) else { continue }
            if let current = hub.latestPrice(of: tick.symbol), !Self.snapshotTick(tick, supersedes: current) { continue }
            newer.append(tick)
        }
        if !newer.isEmpty { hub.deliver(newer) }
        logger.info("price snapshot read", ["symbols": "\(entries.count)", "newer": "\(newer.count)"])
    }
}
