import CoinWatchAlertEngine
import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchPush
import CoinWatchRPC
import CoinWatchStore
import Dispatch
import Foundation
import Synchronization

/// The alert thread: owns the engine, the table of live subscribers and the outbox, and delivers the outbox to
/// APNs through `push`.
final class AlertWorker: @unchecked Sendable {
    // @unchecked Sendable: `engine`, `subscribers`, `result` and `push` are touched only on the
    // alert thread (after `start()`; `load` runs before it, on the creating thread);
    // `inbox` is behind its Mutex, the counters are atomic, the rest is immutable.
    enum Job: Sendable {
        /// Ticks published together (`post(ticks:)`), by their positions in the round's tick buffer (`Inbox.ticks`).
        case ticks(Range<Int>)
        /// Ticks that arrived while the backlog was over its bound, folded per symbol (`FoldedTicks`).
        case foldedTicks(FoldedTicks)
        /// One committed settings batch, in commit order.
        case settingsChanged([SettingsChange])
        case subscribe(AlertSubscriber)
        case unsubscribe(DeviceID, UInt64)
        /// A StreamAlerts call wrote the alert.
        case delivered(key: [UInt8], alertID: String, device: DeviceID)
        /// A registration, and whom to tell the stored registration once it is durable, or why it is not.
        case registerDevice(PushDelivery.Registration, @Sendable (Result<V1.DeviceRegistration, RPCError>) -> Void)
        case unregisterDevice(DeviceID, UnaryResponder<V1.UnregisterDeviceResponse>)
        /// A registration another node took (nil: unregistered there), from the cluster's copy.
        case registrationReplicated(DeviceID, V1.DeviceRegistration?)
        /// APNs's answers, from the provider's thread.
        case pushResponses([APNsResponse])
        /// Cluster mode: this node took these shards over; fire what it held back for them since `sinceMs`.
        case shardsTaken(Set<Int>, sinceMs: Int64)
        /// Cluster mode: an alert another node fired, for this node's StreamAlerts calls of its device.
        case relayed(V1.Alert)
        /// Cluster mode: another node's outbox entries for shards this node took over.
        case restoreOutbox([V1.Alert])
        /// Cluster mode: another node delivered this alert (fired here) to one of its StreamAlerts calls.
        case deliveredElsewhere(V1.Alert)
    }

    let database: Database
    let engine: AlertEngine
    let configuration: AlertService.Configuration
    let logger: Logger
    let stats = AlertCounters()
    /// Cluster mode: whether this node fires a device's alerts (`AlertService.fireOnly(where:)`); nil: always.
    let gate = Mutex<(any AlertGate)?>(nil)
    /// Cluster mode: where the alerts this node fires go for the other nodes (`AlertService.relay(through:)`).
    let relay = Mutex<(any AlertRelay)?>(nil)
    let push: PushDelivery
    /// Jobs waiting for the alert thread. `paused` (a test hook) holds them back until `resume()`.
    ///
    /// The inbox and the alert thread keep two job lists and two tick buffers and swap them each round, so neither
    /// is freed in the steady state: each tick batch is copied into the buffer and its array freed by the thread
    /// that made it. Memory one thread allocates and another frees goes back to glibc's arena of the first, under
    /// that arena's lock, and a replay flooding ticks ran at half its rate in about half of its runs because of it
    /// (the speed bands in docs/PERFORMANCE.md, "Live feeds").
    private struct Inbox {
        var jobs: [Job] = []
        /// The ticks of the `.ticks` jobs in `jobs`.
        var ticks: [PriceTick] = []
        var stopping = false
        var paused = false
        /// `wake` was signalled for jobs the thread has not taken yet: later posts need not signal again (at a
        /// few thousand publishes a second, one wake-up per publish would cost more than the evaluation).
        var signalled = false
        /// Ticks in `jobs` queued one by one (folded ones aside).
        var queuedTicks = 0
        /// The warning that ticks are being folded, at most once a minute.
        var foldWarnings = RateLimitedLog()

        /// Queues `ticks`; once `limit` ticks wait, further prices are folded into the last job instead of queued
        /// (`FoldedTicks`). Returns how many ticks were folded.
        mutating func enqueue(ticks: [PriceTick], tickLimit limit: Int) -> Int {
            guard queuedTicks + ticks.count > limit else {
                queuedTicks += ticks.count
                buffer(ticks)
                return 0
            }
            var folded = 0
            for tick in ticks {
                if tick.isStale {
                    // The prices after a stale mark follow a gap: it keeps its place, and a later fold starts anew.
                    queuedTicks += 1
                    buffer(CollectionOfOne(tick))
                    continue
                }
                if case .foldedTicks(var last) = jobs.last {
                    jobs.removeLast()  // so `last` is the only reference, and folding into it copies nothing
                    last.fold(tick)
                    jobs.append(.foldedTicks(last))
                } else {
                    var fresh = FoldedTicks()
                    fresh.fold(tick)
                    jobs.append(.foldedTicks(fresh))
                }
                folded += 1
            }
            return folded
        }

        /// Appends `new` to the tick buffer as one job.
        private mutating func buffer(_ new: some Collection<PriceTick>) {
            let start = ticks.count
            ticks.append(contentsOf: new)
            jobs.append(.ticks(start..<ticks.count))
        }
    }

    private let inbox = Mutex(Inbox())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let subscriberIDs = Atomic<UInt64>(1)
    private var subscribers: [DeviceID: [UInt64: AlertSubscriber]] = [:]
    private var result = EvaluationResult()
    /// Cluster mode: alerts this node evaluated but left to another node (the gate said no), newest last, kept
    /// for `heldBackLimit` entries so a node that takes a shard over can fire what fell in the hand-over.
    private var heldBack: [(shard: Int, alert: V1.Alert, key: [UInt8], device: DeviceID)] = []
    static let heldBackLimit = 65_536
    /// Alert-thread state: last prices and clock not yet written (see `commit`).
    private var unsavedLastPrices: [Symbol: ExactDecimal] = [:]
    private var unsavedClock = false
    /// Symbols whose feed went stale (`PriceTick.isStale`): their next price is a resumption, which fires nothing.
    private var staleSymbols = Set<Symbol>()
    private var lastPriceSave: Int64 = 0
    private var stopping = false
    private var started = false

    init(database: Database, engine: AlertEngine, configuration: AlertService.Configuration, push: PushDelivery,
         logger: Logger) {
        self.database = database
        self.engine = engine
        self.configuration = configuration
        self.push = push
        self.logger = logger
    }

    func nextSubscriberID() -> UInt64 { subscriberIDs.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Before `start()`: rebuilds the engine from settings and persisted state, and persists the states it had to
    /// compute afresh.
    func load(rules: [RuleRecord], states: AlertStorage.LoadedStates, lastPrices: [Symbol: ExactDecimal], clock: UInt64)
        throws
    {
        let report = try engine.load(rules: rules, armStates: states.states, lastPrices: lastPrices, clock: clock)
        var batch = WriteBatch()
        var rewritten = Set<DeviceID>()
        for device in report.freshStates.map(\.device) + states.unreadableDevices where rewritten.insert(device).inserted {
            let records = engine.armStates(device: device)
            if records.isEmpty {
                batch.delete(AlertStorage.armKey(device))
            } else {
                batch.put(AlertStorage.armKey(device), ArmRecordCoding.encode(records))
            }
        }
        batch.put(AlertStorage.clockKey, Array("\(engine.clock)".utf8))
        try database.write(batch)
        if let first = states.unreadable.first {
            logger.warning("arm state records not readable; their sides were computed afresh", [
                "count": "\(states.unreadable.count)", "first": first.message,
            ])
        }
        logger.info("alert index loaded", [
            "rules": "\(report.rules)", "restored_states": "\(report.restoredStates)",
            "fresh_states": "\(report.freshStates.count)", "discarded_states": "\(report.discardedStates)",
            "unreadable_records": "\(states.unreadable.count)",
        ])
    }

    /// Before `start()`: queues for APNs the outbox entries a previous run left, oldest first.
    func loadPushQueue() throws {
        guard push.isOn else { return }
        var entries: [(key: [UInt8], alert: V1.Alert, device: DeviceID)] = []
        try database.forEach(prefix: AlertStorage.outboxPrefix) { entry in
            if let alert = try? V1.Alert(serializedBytes: entry.value), let device = try? DeviceID(validating: alert.deviceID) {
                entries.append((entry.key, alert, device))
            }
            return .continue
        }
        entries.sort { lhs, rhs in
            lhs.alert.timeMs != rhs.alert.timeMs ? lhs.alert.timeMs < rhs.alert.timeMs : lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        let round = Round()
        for entry in entries {
            push.alertWritten(key: entry.key, device: entry.device, round)
        }
        if !entries.isEmpty {
            logger.info("outbox queued for APNs", ["entries": "\(entries.count)"])
        }
    }

    func start() {
        // The thread holds the worker until `run` returns after `stop()`, then lets it go; nothing holds the thread.
        started = true
        NamedThread.start(name: "cw-alerts") { self.run() }
    }

    /// Queues `job` for the alert thread; `false` once `stop()` began (the job is dropped). Ticks go through
    /// `post(ticks:)`: a tick job points into the inbox's buffer, so only the inbox makes one.
    @discardableResult
    func post(_ job: Job) -> Bool {
        switch job {
        case .ticks, .foldedTicks: preconditionFailure("ticks are posted with post(ticks:)")
        default: break
        }
        return submit { inbox in
            inbox.jobs.append(job)
            return 0
        }
    }

    /// Queues a batch of ticks for the alert thread (copied into the inbox's tick buffer, or folded past the
    /// backlog limit); `false` once `stop()` began.
    @discardableResult
    func post(ticks: [PriceTick]) -> Bool {
        let limit = configuration.tickBacklogLimit
        return submit { $0.enqueue(ticks: ticks, tickLimit: limit) }
    }

    /// Runs `enqueue` on the inbox (it returns how many ticks it folded) and wakes the thread if it is not already
    /// signalled.
    private func submit(_ enqueue: (inout Inbox) -> Int) -> Bool {
        let (accepted, signal, folded, warn) = inbox.withLock { inbox -> (Bool, Bool, Int, Bool) in
            guard !inbox.stopping else { return (false, false, 0, false) }
            let folded = enqueue(&inbox)
            let warn = folded > 0 && inbox.foldWarnings.admit("folding", now: MonotonicClock.nanoseconds()) != nil
            defer { inbox.signalled = true }
            return (true, !inbox.signalled, folded, warn)
        }
        if folded > 0 { stats.ticksFolded.add(folded, ordering: .relaxed) }
        if warn {
            logger.warning("prices arrive faster than alerts are evaluated; folding each symbol's ticks to its lowest, highest and latest", [
                "backlog_limit": "\(configuration.tickBacklogLimit)", "ticks_folded_total": "\(stats.ticksFolded.load(ordering: .relaxed))",
            ])
        }
        if signal { wake.signal() }
        return accepted
    }

    func stop() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return !inbox.stopping
        }
        guard first, started else { return }
        wake.signal()
        finished.wait()
    }

    // MARK: Test hooks

    /// Holds queued jobs back from the alert thread until `resume()`, so a test can make several jobs share one
    /// round (and so one batch) exactly. `stop()` overrides it.
    func pause() {
        inbox.withLock { $0.paused = true }
    }

    func resume() {
        inbox.withLock { $0.paused = false }
        wake.signal()
    }

    /// Jobs queued and not yet taken by the alert thread.
    var queuedJobs: Int {
        inbox.withLock { $0.jobs.count }
    }

    // MARK: The alert thread

    private func run() {
        var lastSweep = MonotonicClock.nanoseconds()
        // The first round runs at once: it sends what `loadPushQueue` found in the outbox.
        var first = true
        // The lists this thread swaps with the inbox's each round (see `Inbox`).
        var jobs: [Job] = []
        var ticks: [PriceTick] = []
        while true {
            var sleep: Int64 = 60_000_000_000
            if let retry = push.nextRetry { sleep = min(sleep, max(0, retry - MonotonicClock.nanoseconds())) }
            if !first { _ = wake.wait(timeout: .now() + .nanoseconds(Int(sleep))) }
            first = false
            let stopping = inbox.withLock { inbox -> Bool in
                guard !inbox.paused || inbox.stopping else { return false }
                swap(&inbox.jobs, &jobs)
                swap(&inbox.ticks, &ticks)
                inbox.signalled = false
                inbox.queuedTicks = 0
                return inbox.stopping
            }
            var round = Round()
            for job in jobs { handle(job, ticks, &round) }
            jobs.removeAll(keepingCapacity: true)
            ticks.removeAll(keepingCapacity: true)
            if MonotonicClock.nanoseconds() - lastSweep > 60_000_000_000 {
                sweepExpired(&round)
                lastSweep = MonotonicClock.nanoseconds()
            }
            self.stopping = stopping
            push.prepare(&round, nowMs: WallClock.milliseconds(), read: outboxEntry)
            commit(&round)
            if stopping && inbox.withLock({ $0.jobs.isEmpty }) { break }
        }
        finished.signal()
    }

    /// What one round of jobs writes and sends.
    struct Round {
        var batch = WriteBatch()
        var lastPrices: [Symbol: ExactDecimal] = [:]
        var deliveries: [(AlertSubscriber, V1.Alert, key: [UInt8])] = []
        /// Alerts other nodes fired, for this node's StreamAlerts calls (no outbox entry here to clear).
        var relayedDeliveries: [(AlertSubscriber, V1.Alert)] = []
        /// Alerts this node fired in the round, for the relay once the round is written.
        var fired: [(V1.Alert, DeviceID)] = []
        var clockChanged = false
        /// Devices whose arm states changed: their `alert:arm:` records are rewritten from the engine at `commit`.
        var armDevices = Set<DeviceID>()
        /// Outbox entries this round replaced (`nil`: deleted), by key. They reach LevelDB only at `commit`, so
        /// every read of the outbox during the round goes through `outboxEntry` / this overlay: a job must see
        /// what earlier jobs of the same round did, or a subscriber would miss an alert fired just before it
        /// subscribed, and a stale delete (expiry, delivery of an older alert) would wipe a newer one.
        var outbox: [[UInt8]: V1.Alert?] = [:]
        /// Device registrations this round changed (`nil`: removed); published to the registry after the write.
        var registrations: [DeviceID: V1.DeviceRegistration?] = [:]
        /// Those of them a RegisterDevice or UnregisterDevice here made: handed to the relay after the write.
        var registeredHere: [DeviceID: V1.DeviceRegistration?] = [:]
        /// A caller waits for a change of this round: write it synced.
        var syncWrite = false
        /// Answers to send once the round's batch is written (with the write's error, if it failed).
        var replies: [(RPCError?) -> Void] = []
        /// Notifications to hand to APNs once the round's batch is written.
        var pushRequests: [APNsRequest] = []
        var pushCounts = PushCounts()
    }

    /// The outbox entry under `key` as of this point of the round.
    func outboxEntry(_ key: [UInt8], _ round: Round) -> V1.Alert? {
        if let staged = round.outbox[key] { return staged }
        guard let bytes = try? database.get(key) else { return nil }
        return try? V1.Alert(serializedBytes: bytes)
    }

    /// Runs `job`; `ticks` is the round's tick buffer, which `.ticks` jobs point into.
    private func handle(_ job: Job, _ ticks: [PriceTick], _ round: inout Round) {
        switch job {
        case .ticks(let range):
            evaluate(ticks[range], &round)
        case .foldedTicks(let folded):
            evaluate(folded.ticks[...], &round)
        case .settingsChanged(let changes):
            // A save that leaves the rules as they were (a new version, same thresholds) changes nothing here.
            for change in changes where change.old?.rules != change.new?.rules {
                applyRules(
                    device: change.device,
                    old: AlertStorage.rules(of: change.old),
                    new: AlertStorage.rules(of: change.new),
                    &round
                )
            }
        case .subscribe(let subscriber):
            subscribe(subscriber, &round)
        case .unsubscribe(let device, let id):
            subscribers[device]?.removeValue(forKey: id)
            if subscribers[device]?.isEmpty == true { subscribers.removeValue(forKey: device) }
            stats.subscribers.store(subscribers.values.reduce(0) { $0 + $1.count }, ordering: .relaxed)
        case .delivered(let key, let alertID, let device):
            takeDelivered(key, alertID: alertID, device: device, &round)
        case .deliveredElsewhere(let alert):
            guard let device = try? DeviceID(validating: alert.deviceID),
                  let symbol = try? Symbol(validating: alert.symbol)
            else { return }
            // Every node hears every notice; only the node that fires the device's alerts keeps its outbox, so the
            // others skip the store read.
            if let gate = gate.withLock({ $0 }), !gate.fires(for: device) { return }
            if takeDelivered(AlertStorage.outboxKey(device, symbol), alertID: alert.id, device: device, &round) {
                stats.deliveredElsewhere.add(1, ordering: .relaxed)
            }
        case .relayed(let alert):
            guard let device = try? DeviceID(validating: alert.deviceID) else { return }
            // The node that fires the device's alerts delivered this one to its own calls already.
            if let gate = gate.withLock({ $0 }), gate.fires(for: device) { return }
            for subscriber in subscribers[device]?.values ?? [:].values {
                round.relayedDeliveries.append((subscriber, alert))
            }
        case .restoreOutbox(let alerts):
            for alert in alerts {
                guard let device = try? DeviceID(validating: alert.deviceID),
                      let symbol = try? Symbol(validating: alert.symbol)
                else { continue }
                let key = AlertStorage.outboxKey(device, symbol)
                if let held = outboxEntry(key, round), held.timeMs >= alert.timeMs { continue }
                round.outbox[key] = .some(alert)
                push.alertWritten(key: key, device: device, round)
                stats.outboxRestored.add(1, ordering: .relaxed)
            }
        case .shardsTaken(let shards, let sinceMs):
            takeOver(shards, sinceMs: sinceMs, &round)
        case .registerDevice(let registration, let reply):
            push.register(registration, reply: reply, nowMs: WallClock.milliseconds(), &round) { device, round in
                self.outboxKeys(of: device, round)
            }
        case .unregisterDevice(let device, let responder):
            push.unregister(device, responder: responder, &round)
        case .registrationReplicated(let device, let registration):
            push.applyReplicated(device, registration, &round) { device, round in self.outboxKeys(of: device, round) }
        case .pushResponses(let responses):
            push.handle(responses, &round, nowMs: WallClock.milliseconds(), read: outboxEntry)
        }
    }

    /// An outbox entry's alert reached a StreamAlerts call (here or, relayed, on another node): the entry leaves,
    /// unless a newer alert replaced it or APNs is to deliver it (the phone is its recipient, whoever else follows
    /// the device). True when it left.
    @discardableResult
    private func takeDelivered(_ key: [UInt8], alertID: String, device: DeviceID, _ round: inout Round) -> Bool {
        guard !push.owns(device, round) && outboxEntry(key, round)?.id == alertID else { return false }
        round.outbox[key] = .some(nil)
        return true
    }

    private func evaluate(_ ticks: ArraySlice<PriceTick>, _ round: inout Round) {
        let now = WallClock.milliseconds()
        let gate = self.gate.withLock { $0 }
        // A feed's ticks come in runs of one symbol: the run's last price is what the round keeps, stored when the
        // run ends rather than hashed into the dictionary on every tick.
        var run: (symbol: Symbol, price: ExactDecimal)?
        defer { if let run { round.lastPrices[run.symbol] = run.price } }
        for tick in ticks {
            // A stale tick is no price: it says the next one follows a period nobody saw, so a crossing between the
            // last price and the next must not fire (docs/ALERTS.md, "Stale prices").
            if tick.isStale {
                staleSymbols.insert(tick.symbol)
                continue
            }
            let resuming = !staleSymbols.isEmpty && staleSymbols.remove(tick.symbol) != nil
            result.removeAll()
            do {
                try engine.evaluate(symbol: tick.symbol, price: tick.price, resuming: resuming, into: &result)
            } catch {
                logger.warning("tick not evaluated", ["tick": "\(tick)", "reason": "\(error)"])
                continue
            }
            stats.ticksEvaluated.add(1, ordering: .relaxed)
            if result.suppressed > 0 {
                stats.crossingsSuppressed.add(result.suppressed, ordering: .relaxed)
            }
            if let last = run, last.symbol != tick.symbol { round.lastPrices[last.symbol] = last.price }
            run = (tick.symbol, tick.price)
            round.clockChanged = true
            for record in result.armStateChanges {
                round.armDevices.insert(record.device)
            }
            for fired in result.alerts {
                let alert = AlertNotification.make(fired, id: UUID().uuidString.lowercased(), timeMs: now)
                let key = AlertStorage.outboxKey(fired.device, fired.symbol)
                if let gate, !gate.fires(for: fired.device) {
                    // Another node owns the device's shard and fires it; the arm state changed here all the same.
                    stats.alertsSuppressed.add(1, ordering: .relaxed)
                    if heldBack.count >= Self.heldBackLimit { heldBack.removeFirst(heldBack.count / 2) }
                    heldBack.append((AlertShards.shard(of: fired.device), alert, key, fired.device))
                    continue
                }
                fire(alert, key: key, device: fired.device, &round)
            }
        }
    }

    /// Fires the alerts held back for `shards` since `sinceMs`: the previous owner may have stopped (or died)
    /// before then, and nobody fired them. Those it did fire in that span are fired twice (same collapse id);
    /// they are counted as `alertsReplayedOnTakeover`. Older held-back alerts of these shards are dropped.
    private func takeOver(_ shards: Set<Int>, sinceMs: Int64, _ round: inout Round) {
        var kept: [(shard: Int, alert: V1.Alert, key: [UInt8], device: DeviceID)] = []
        for entry in heldBack {
            guard shards.contains(entry.shard) else {
                kept.append(entry)
                continue
            }
            guard entry.alert.timeMs >= sinceMs else { continue }
            fire(entry.alert, key: entry.key, device: entry.device, &round)
            stats.alertsReplayedOnTakeover.add(1, ordering: .relaxed)
        }
        heldBack = kept
    }

    /// An alert this node fires, now or replayed on a takeover: into the outbox, to APNs and to the relay once the
    /// round is written, and to the device's StreamAlerts calls here.
    private func fire(_ alert: V1.Alert, key: [UInt8], device: DeviceID, _ round: inout Round) {
        round.outbox[key] = .some(alert)
        push.alertWritten(key: key, device: device, round)
        stats.alertsFired.add(1, ordering: .relaxed)
        round.fired.append((alert, device))
        for subscriber in subscribers[device]?.values ?? [:].values {
            round.deliveries.append((subscriber, alert, key))
        }
    }

    private func applyRules(device: DeviceID, old: [Symbol: AlertRule], new: [Symbol: AlertRule], _ round: inout Round) {
        for symbol in Set(old.keys).union(new.keys) where old[symbol] != new[symbol] {
            let rule = new[symbol] ?? AlertRule()
            do {
                try engine.setRule(device: device, symbol: symbol, rule: rule)
                // The device's record is rewritten whole from the engine at commit: new sides with their fresh
                // state, sides turned off gone, and unchanged sides with the state they kept (recomputing those at a
                // restart could re-arm a side that fired and has not come back through the band).
                round.armDevices.insert(device)
                round.clockChanged = true
            } catch {
                logger.warning("rule not applied", ["device": device.rawValue, "symbol": symbol.rawValue, "reason": "\(error)"])
            }
        }
    }

    private func subscribe(_ subscriber: AlertSubscriber, _ round: inout Round) {
        subscribers[subscriber.device, default: [:]][subscriber.id] = subscriber
        stats.subscribers.store(subscribers.values.reduce(0) { $0 + $1.count }, ordering: .relaxed)
        let oldest = WallClock.milliseconds() - configuration.outboxExpiry.inMilliseconds
        let prefix = AlertStorage.outboxDevicePrefix(subscriber.device)
        // The device's outbox as of this point of the round; a `nil` alert is an entry that does not decode.
        var entries: [[UInt8]: V1.Alert?] = [:]
        do {
            for entry in try database.scan(prefix: prefix) {
                entries[entry.key] = .some(try? V1.Alert(serializedBytes: entry.value))
            }
        } catch {
            logger.warning("outbox not readable", ["device": subscriber.device.rawValue, "reason": "\(error)"])
        }
        for (key, staged) in round.outbox where key.starts(with: prefix) {
            if let staged {
                entries[key] = .some(staged)
            } else {
                entries.removeValue(forKey: key)
            }
        }
        var pending: [(alert: V1.Alert, key: [UInt8])] = []
        for (key, entry) in entries {
            guard let alert = entry, alert.timeMs >= oldest else {
                round.outbox[key] = .some(nil)
                continue
            }
            pending.append((alert, key))
        }
        // Oldest first; alerts of the same millisecond in key (symbol) order, so the order never depends on hashing.
        pending.sort { lhs, rhs in
            lhs.alert.timeMs != rhs.alert.timeMs
                ? lhs.alert.timeMs < rhs.alert.timeMs : lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        for (alert, key) in pending {
            round.deliveries.append((subscriber, alert, key))
        }
    }

    /// The keys of every outbox entry of `device` as of this point of the round.
    private func outboxKeys(of device: DeviceID, _ round: Round) -> [[UInt8]] {
        let prefix = AlertStorage.outboxDevicePrefix(device)
        var keys = Set((try? database.scan(prefix: prefix))?.map(\.key) ?? [])
        for (key, staged) in round.outbox where key.starts(with: prefix) {
            if staged != nil { keys.insert(key) } else { keys.remove(key) }
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Drops outbox entries past the expiry.
    private func sweepExpired(_ round: inout Round) {
        let oldest = WallClock.milliseconds() - configuration.outboxExpiry.inMilliseconds
        var expired: [[UInt8]] = []
        try? database.forEach(prefix: AlertStorage.outboxPrefix) { entry in
            if let alert = try? V1.Alert(serializedBytes: entry.value), alert.timeMs >= oldest { return .continue }
            expired.append(entry.key)
            return .continue
        }
        // An entry this round already replaced or deleted is newer than what LevelDB holds.
        for key in expired where round.outbox[key] == nil {
            round.outbox[key] = .some(nil)
            push.outboxEntryExpired(key, &round)
        }
    }

    /// Writes the round's records in one batch, then sends its alerts.
    private func commit(_ round: inout Round) {
        for device in round.armDevices {
            let records = engine.armStates(device: device)
            if records.isEmpty {
                round.batch.delete(AlertStorage.armKey(device))
            } else {
                round.batch.put(AlertStorage.armKey(device), ArmRecordCoding.encode(records))
            }
        }
        for (key, alert) in round.outbox {
            if let alert {
                round.batch.put(key, alert.serializedBytes())
            } else {
                round.batch.delete(key)
            }
        }
        // Last prices and the clock ride along with any state change, so persisted arm
        // states always agree with the persisted last price. A round that changed no
        // state leaves them pending for up to a second: after a crash the engine then
        // resumes from a slightly older price with the same states, which fires
        // exactly what the lost ticks would have fired, and nothing twice.
        for (symbol, price) in round.lastPrices { unsavedLastPrices[symbol] = price }
        unsavedClock = unsavedClock || round.clockChanged
        let now = MonotonicClock.nanoseconds()
        if !round.batch.isEmpty || now &- lastPriceSave >= 1_000_000_000 || stopping {
            for (symbol, price) in unsavedLastPrices {
                round.batch.put(AlertStorage.lastKey(symbol), Array(price.description.utf8))
            }
            if unsavedClock {
                round.batch.put(AlertStorage.clockKey, Array("\(engine.clock)".utf8))
            }
            unsavedLastPrices = [:]
            unsavedClock = false
            lastPriceSave = now
        }
        for (device, registration) in round.registrations {
            if let registration {
                round.batch.put(PushStorage.deviceKey(device), registration.serializedBytes())
            } else {
                round.batch.delete(PushStorage.deviceKey(device))
            }
        }
        var failure: RPCError?
        if !round.batch.isEmpty {
            do {
                try database.write(round.batch, sync: round.syncWrite)
            } catch {
                logger.error("alert state not written", ["reason": "\(error)"])
                failure = RPCError(code: .unavailable, message: "store write failed: \(error.message)")
            }
        }
        if failure == nil {
            push.registry.apply(round.registrations)
        }
        for reply in round.replies { reply(failure) }
        push.committed(&round)
        for (subscriber, alert, key) in round.deliveries {
            let stream = subscriber.stream
            let id = alert.id
            let device = subscriber.device
            stream.eventLoop.execute { [self] in
                guard stream.isActive else { return }
                stream.send(alert)
                stats.alertsDelivered.add(1, ordering: .relaxed)
                post(.delivered(key: key, alertID: id, device: device))
            }
        }
        let relay = relay.withLock { $0 }
        for (subscriber, alert) in round.relayedDeliveries {
            let stream = subscriber.stream
            let device = subscriber.device
            stream.eventLoop.execute { [self] in
                guard stream.isActive else { return }
                stream.send(alert)
                stats.alertsDelivered.add(1, ordering: .relaxed)
                // The firing node's outbox still holds it: tell that node, or the device's next call there gets it
                // again as pending.
                relay?.deliveredHere(alert, device: device)
            }
        }
        if let relay {
            for (alert, device) in round.fired { relay.fired(alert, device: device) }
            // A round whose write failed changed nothing on disk, so there is nothing to replicate.
            if failure == nil && !round.outbox.isEmpty {
                relay.outboxChanged(round.outbox.compactMap { key, alert in
                    AlertStorage.outboxParts(key).map { (device: $0.0, symbol: $0.1, alert: alert) }
                })
            }
            if failure == nil && !round.registeredHere.isEmpty {
                relay.registrationsChanged(round.registeredHere.map { (device: $0.key, registration: $0.value) })
            }
        }
    }
}

/// The atomics behind `AlertStats`.
final class AlertCounters: Sendable {
    let ticksEvaluated = Atomic<Int>(0)
    let ticksFolded = Atomic<Int>(0)
    let crossingsSuppressed = Atomic<Int>(0)
    let alertsFired = Atomic<Int>(0)
    let alertsDelivered = Atomic<Int>(0)
    let subscribers = Atomic<Int>(0)
    let alertsSuppressed = Atomic<Int>(0)
    let alertsReplayedOnTakeover = Atomic<Int>(0)
    let outboxRestored = Atomic<Int>(0)
    let deliveredElsewhere = Atomic<Int>(0)

    var snapshot: AlertStats {
        AlertStats(
            ticksEvaluated: ticksEvaluated.load(ordering: .relaxed), ticksFolded: ticksFolded.load(ordering: .relaxed),
            alertsFired: alertsFired.load(ordering: .relaxed),
            alertsDelivered: alertsDelivered.load(ordering: .relaxed), subscribers: subscribers.load(ordering: .relaxed),
            crossingsSuppressed: crossingsSuppressed.load(ordering: .relaxed),
            alertsSuppressed: alertsSuppressed.load(ordering: .relaxed),
            alertsReplayedOnTakeover: alertsReplayedOnTakeover.load(ordering: .relaxed),
            outboxRestored: outboxRestored.load(ordering: .relaxed),
            deliveredElsewhere: deliveredElsewhere.load(ordering: .relaxed))
    }
}
