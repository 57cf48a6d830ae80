import CoinWatchAlertEngine
public import CoinWatchLogging
public import CoinWatchModel
public import CoinWatchProto
import CoinWatchPush
import CoinWatchRPC
public import CoinWatchStore
import Dispatch
import Foundation
import Synchronization

/// Decides which devices to notify when prices move, keeps undelivered alerts in
/// a durable per-device outbox, and streams them to `StreamAlerts` callers.
///
/// Every published tick (the full stream, not the conflated display streams)
/// and every settings change goes to one alert thread that owns the
/// `AlertEngine`; nothing else touches the engine, so the per-tick path takes no
/// lock. Each round of work ends with one LevelDB batch holding the arm states,
/// last prices, clock and outbox entries it produced, so a restart neither
/// re-fires a crossing nor loses an armed rule. docs/ALERTS.md has the semantics.
public final class AlertService: Sendable {
    public struct Configuration: Sendable {
        /// How far back past a threshold the price must move before the rule can fire again.
        public var hysteresis = ExactDecimal(mantissa: 5, scale: 3)!
        /// Undelivered alerts older than this are dropped: stale price alerts mislead.
        public var outboxExpiry: Duration = .seconds(3600)
        /// Ticks that may wait for the alert thread; past it, prices are folded per symbol to the ticks that decide
        /// crossings (`FoldedTicks`, docs/ALERTS.md "When prices outrun the alert thread"), so a flood of prices
        /// cannot grow memory without bound.
        public var tickBacklogLimit = 65_536

        public init() {}
    }

    let worker: AlertWorker

    /// An alert service without push delivery.
    public convenience init(database: Database, settings: SettingsStore, configuration: Configuration = Configuration(),
                            logger: Logger = .disabled) throws {
        try self.init(
            database: database, settings: settings, configuration: configuration, logger: logger, armStates: nil,
            rulesAtLoad: nil)
    }

    /// - Parameters:
    ///   - armStates: the arm states, if the caller already started reading them (on another thread, while the
    ///     settings loaded); read here otherwise.
    ///   - rulesAtLoad: every device's rules as the settings store's load read them (its `onLoadedRule` hook), if
    ///     the caller collected them; used when no change was committed since, else the rules are read again.
    ///   - push: delivery of the outbox to APNs, run by the alert thread; none when nil.
    init(database: Database, settings: SettingsStore, configuration: Configuration = Configuration(),
         logger: Logger = .disabled, armStates: BackgroundResult<AlertStorage.LoadedStates>?,
         rulesAtLoad: [RuleRecord]?, push: PushDelivery? = nil) throws {
        let push = push ?? PushDelivery(
            sender: nil, environment: .production, defaultTopic: "", registry: DeviceRegistry([:]),
            configuration: PushDelivery.Configuration(), outboxExpiry: configuration.outboxExpiry, logger: logger)
        let engine = AlertEngine(configuration: try AlertEngine.Configuration(hysteresis: configuration.hysteresis))
        worker = AlertWorker(database: database, engine: engine, configuration: configuration, push: push, logger: logger)
        // The arm states are read on a second thread (started by the caller, if it read them ahead) while this one
        // collects the rules.
        let armStates = armStates ?? AlertStorage.startLoadingArmStates(database)
        let prices: (lastPrices: [Symbol: ExactDecimal], clock: UInt64)
        do {
            prices = try AlertStorage.loadPricesAndClock(database)
        } catch {
            _ = try? armStates.value()
            throw error
        }
        let worker = self.worker
        var loadError: (any Error)?
        settings.observeChangesSinceLoad({ changedSinceLoad in
            // Decoding a million messages for their rules was most of the alert service's start-up: the rules the
            // load read are taken when they are still current.
            let rules = (changedSinceLoad ? nil : rulesAtLoad) ?? AlertStorage.ruleRecords(from: settings)
            do {
                try worker.load(rules: rules, states: try armStates.value(), lastPrices: prices.lastPrices, clock: prices.clock)
            } catch {
                loadError = error
            }
        }, onChange: { changes in
            // The settings writer waits for this: turning settings into rules happens on the alert thread.
            worker.post(.settingsChanged(changes))
        })
        if let loadError { throw loadError }
        try worker.loadPushQueue()
        worker.start()
    }

    /// The hub's hook: every tick, in publish order.
    public func ingest(_ ticks: [PriceTick]) {
        worker.post(ticks: ticks)
    }

    /// Cluster mode: from now on a fired alert is put in the outbox and delivered only when `gate` says this node
    /// fires the device's alerts; the others are counted (`alertsSuppressed`). Set once, before serving.
    public func fireOnly(where gate: any AlertGate) {
        worker.gate.withLock { $0 = gate }
    }

    /// Cluster mode: every alert this node fires is also handed to `relay` for the other nodes. Set once, before
    /// serving.
    public func relay(through relay: any AlertRelay) {
        worker.relay.withLock { $0 = relay }
    }

    /// Cluster mode: an alert another node fired (its relay carried it here): delivered to this node's
    /// `StreamAlerts` calls of its device, and to nothing else (the outbox and APNs are the firing node's).
    public func deliverRelayed(_ alert: V1.Alert) {
        worker.post(.relayed(alert))
    }

    /// Cluster mode: another node wrote `alert`, which this node fired, to one of its StreamAlerts calls (its relay
    /// said so): the alert leaves this node's outbox as if one of its own calls had taken it — unless APNs is to
    /// deliver it (the phone is its recipient) or a newer alert replaced it. Without this, the device's next
    /// StreamAlerts call here would be sent it again as pending.
    public func deliveredElsewhere(_ alert: V1.Alert) {
        worker.post(.deliveredElsewhere(alert))
    }

    /// Cluster mode: outbox entries another node kept for devices whose shard this node has just taken over (read
    /// from the replicated copy `AlertRelay.outboxChanged` wrote). Each goes into this node's outbox unless it
    /// already holds that device and symbol's alert or a newer one, for the device's next StreamAlerts call and
    /// for APNs; calls already open are not sent it again (they received it live, relayed, when it fired).
    public func restoreOutbox(_ alerts: [V1.Alert]) {
        worker.post(.restoreOutbox(alerts))
    }

    /// Cluster mode: a registration another node took (nil: unregistered there), read from the cluster's copy that
    /// `AlertRelay.registrationsChanged` wrote: this node's registry and store follow it, so whichever node owns
    /// the device's shard sends its pushes.
    public func applyReplicatedRegistration(_ device: DeviceID, _ registration: V1.DeviceRegistration?) {
        worker.post(.registrationReplicated(device, registration))
    }

    /// Cluster mode: this node now holds `shards`' leases. The alerts it held back for them whose time is at least
    /// `sinceMs` are fired now, in case their previous owner stopped before firing them (docs/SCALING.md,
    /// "The failover window"); call it after the gate says yes for them.
    public func shardsTaken(_ shards: Set<Int>, sinceMs: Int64) {
        worker.post(.shardsTaken(shards, sinceMs: sinceMs))
    }

    /// Counters for logs, tests and benchmarks.
    public var stats: AlertStats { worker.stats.snapshot }

    /// Stops the alert thread after it finished what was queued. Idempotent.
    public func close() {
        worker.stop()
    }
}

/// Counters of the alert service.
public struct AlertStats: Sendable, Hashable {
    public var ticksEvaluated: Int
    /// Ticks folded (not evaluated one by one) because the alert thread was behind (`FoldedTicks`).
    public var ticksFolded: Int = 0
    public var alertsFired: Int
    public var alertsDelivered: Int
    public var subscribers: Int
    /// Armed sides a price after a stale period reached without firing.
    public var crossingsSuppressed: Int
    /// Alerts that fired here while another node owned the device's shard (cluster mode): fired there instead.
    public var alertsSuppressed: Int = 0
    /// Held-back alerts fired when this node took their shard over (some may have been fired by the old owner).
    public var alertsReplayedOnTakeover: Int = 0
    /// Outbox entries restored from another node's replicated outbox when this node took their shard over.
    public var outboxRestored: Int = 0
    /// Outbox entries that left because another node delivered their alert to one of its StreamAlerts calls.
    public var deliveredElsewhere: Int = 0
}

/// A live `StreamAlerts` call.
struct AlertSubscriber: Sendable {
    let id: UInt64
    let device: DeviceID
    let stream: ServerStream
}
