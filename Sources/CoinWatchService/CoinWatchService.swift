import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore

/// The CoinWatch service: device settings, live prices and alerts, assembled
/// over one LevelDB database and served by an `RPCServer`.
///
/// Lifecycle: `init` opens the components (loading settings into memory),
/// `methods` go to the server, `attach(to:)` gives stream fan-out the server's
/// event loops, `start()` starts the feed, `close()` stops everything (the
/// caller closes the database afterwards).
public final class CoinWatchService: Sendable {
    public struct Configuration: Sendable {
        /// `sim`, `replay:FILE` or `none`.
        public var feed = "sim"
        public var simRate = 10.0
        public var seed: UInt64?
        public var replaySpeed = 1.0
        public var replayLoop = false
        /// When set, PublishPrices requires it.
        public var publishToken: String?
        /// A price subscriber that cannot keep up this long is ended RESOURCE_EXHAUSTED.
        public var slowSubscriberTimeout: Duration = .seconds(10)

        public init() {}
    }

    public let configuration: Configuration
    public let settings: SettingsStore
    public let health = HealthState()
    let logger: Logger

    public init(database: Database, configuration: Configuration, logger: Logger = .disabled) throws {
        self.configuration = configuration
        self.logger = logger
        settings = try SettingsStore(database: database)
    }

    /// Every method the service serves.
    public var methods: [RPCMethod] {
        settings.methods + health.methods
    }

    /// Gives stream fan-out the server's event loops.
    public func attach(to server: RPCServer) {}

    /// Starts the feed; the service reports SERVING from here on.
    public func start() {
        health.setServing(true)
    }

    public var feedDescription: String { configuration.feed }

    public var feedSymbols: [String] { [] }

    public var deviceCount: Int { settings.deviceCount }

    /// Stops the feed and the writers. Idempotent.
    public func close() {
        health.setServing(false)
        settings.close()
    }
}
