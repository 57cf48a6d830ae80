import CoinWatchAlertEngine
public import CoinWatchAuth
public import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC
public import CoinWatchStore

/// The CoinWatch service: device settings, live prices and alerts, assembled
/// over one LevelDB database and served by an `RPCServer`.
///
/// Lifecycle: `init` opens the components (settings loaded into memory, the
/// alert index rebuilt, last prices restored) and makes the feed, `methods` go
/// to the server, `start()` starts the feed, `close()` stops everything in
/// dependency order (the caller closes the database afterwards). Which feed runs
/// is the caller's choice (`coinwatchd` builds it from `--feed` with
/// CoinWatchFeeds): the service only starts, stops and reports it.
public final class CoinWatchService: Sendable {
    public struct Configuration: Sendable {
        /// When set, a device's first save issues its secret (see `DeviceClaims`).
        public var deviceClaims: DeviceClaims?
        /// A price subscriber that cannot keep up this long is ended RESOURCE_EXHAUSTED.
        public var slowSubscriberTimeout: Duration = .seconds(10)
        public var alerts = AlertService.Configuration()
        /// Whether `start()` starts the feed. Cluster mode turns it off: there a node runs the feed only while it
        /// holds the feed's lease (CoinWatchCluster starts it).
        public var startsFeed = true
        /// Device registration and delivery to APNs (off unless a provider is given).
        public var push = PushService.Configuration()

        public init() {}
    }

    public let configuration: Configuration
    public let settings: SettingsStore
    public let hub: PriceHub
    public let alerts: AlertService
    public let push: PushService
    public let feed: any PriceFeed
    public let health = HealthState()
    let logger: Logger

    /// - Parameters:
    ///   - journal: the store's settings journal, when the caller opened it (`SettingsStore.openJournal`) before
    ///     reading the store, as `coinwatchd` does; the caller closes it after `close()`. Without it the settings
    ///     store opens its own.
    ///   - makeFeed: makes the feed that publishes into the hub, once the hub exists; it does not run until
    ///     `start()`. Errors it throws are rethrown after everything opened so far is closed again.
    public init(
        database: Database, journal: WriteAheadJournal? = nil, configuration: Configuration, logger: Logger = .disabled,
        makeFeed: (PriceHub) throws -> any PriceFeed = { _ in NoFeed() }
    ) throws {
        self.configuration = configuration
        self.logger = logger
        // Most of a start on a large store is two key ranges: every device's settings and the alert arm states.
        // The arm states are read on a second thread while the settings load (after any migration of the layout).
        try Self.prepareStorage(database)
        let armStates = AlertStorage.startLoadingArmStates(database)
        // The alert index is built from every device's rules: collected from the settings load's own pass.
        var rulesAtLoad: [RuleRecord] = []
        do {
            settings = try SettingsStore(database: database, journal: journal) { device, rule in
                rulesAtLoad.append(AlertStorage.ruleRecord(device, rule))
            }
        } catch {
            _ = try? armStates.value()
            throw error
        }
        let delivery: PushDelivery
        do {
            let registrations = try PushStorage.load(database)
            if let first = registrations.unreadable.first {
                logger.warning("device registrations not readable; those devices count as not registered", [
                    "count": "\(registrations.unreadable.count)", "first": first,
                ])
            }
            var backoff = PushDelivery.Configuration()
            backoff.initialBackoff = configuration.push.initialBackoff
            backoff.maxBackoff = configuration.push.maxBackoff
            delivery = PushDelivery(
                sender: configuration.push.sender, environment: configuration.push.environment,
                defaultTopic: configuration.push.defaultTopic, registry: DeviceRegistry(registrations.registrations),
                configuration: backoff, outboxExpiry: configuration.alerts.outboxExpiry, logger: logger.labeled("push"))
            alerts = try AlertService(
                database: database, settings: settings, configuration: configuration.alerts,
                logger: logger.labeled("alerts"), armStates: armStates, rulesAtLoad: rulesAtLoad, push: delivery)
        } catch {
            _ = try? armStates.value()
            settings.close()
            throw error
        }
        push = PushService(
            worker: alerts.worker, registry: delivery.registry, counters: delivery.counters,
            sender: configuration.push.sender)
        let push = self.push
        health.reportPush { push.healthState }
        var hubConfiguration = PriceHub.Configuration()
        hubConfiguration.slowSubscriberTimeout = configuration.slowSubscriberTimeout
        let alerts = self.alerts
        do {
            hub = try PriceHub(configuration: hubConfiguration, database: database, onTicks: { alerts.ingest($0) })
        } catch {
            alerts.close()
            settings.close()
            throw error
        }
        if !hub.loadReport.skipped.isEmpty {
            logger.warning("stored prices skipped", ["count": "\(hub.loadReport.skipped.count)"])
        }
        do {
            feed = try makeFeed(hub)
        } catch {
            hub.close()
            alerts.close()
            settings.close()
            throw error
        }
        let feed = self.feed
        health.reportFeedSources { feed.sourceStats }
    }

    /// Brings an older store's layout up to this build's, running every component's migrations in version order,
    /// before any component loads; refuses a store laid out by a newer build.
    static func prepareStorage(_ database: Database) throws(StoreError) {
        try StorageSchema.prepare(database, migrations: AlertStorage.migrations)
    }

    /// Every method the service serves.
    public var methods: [RPCMethod] {
        let hub = self.hub
        return settings.methods(isPriced: { hub.latestPrice(of: $0) != nil }, claims: configuration.deviceClaims)
            + hub.methods + alerts.methods + push.methods(claims: configuration.deviceClaims) + health.methods
    }

    /// Starts the feed; from here on the service reports SERVING.
    public func start() {
        push.start()
        if configuration.startsFeed { feed.start() }
        health.setServing(true)
    }

    public var feedDescription: String { feed.name }

    public var feedSymbols: [String] { feed.symbols.map(\.rawValue) }

    public var deviceCount: Int { settings.deviceCount }

    /// Stops the feed, the hub's persistence, the alert thread and the settings
    /// writer, in that order, each after finishing what was queued. Idempotent.
    public func close() {
        health.setServing(false)
        feed.stop()
        hub.close()
        push.close()
        alerts.close()
        settings.close()
    }
}
