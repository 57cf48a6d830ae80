import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing
@testable import CoinWatchService

/// A whole `CoinWatchService` over a LevelDB database at `path`, with no feed (prices come only from `publish` or
/// PublishPrices), served by an in-process `RPCServer` on loopback port 0, and a client event loop group.
final class AlertServiceHarness: Sendable {
    let path: String
    let database: Database
    let service: CoinWatchService
    let server: RPCServer
    let clients: EventLoopGroup

    /// Opens (or reopens) the database at `path` and starts the service and server on it.
    init(path: String, configure: (inout CoinWatchService.Configuration) -> Void = { _ in }) throws {
        self.path = path
        database = try Database(path: path)
        var configuration = CoinWatchService.Configuration()
        configure(&configuration)
        do {
            service = try CoinWatchService(database: database, configuration: configuration)
        } catch {
            database.close()
            throw error
        }
        var serverConfiguration = RPCServer.Configuration()
        serverConfiguration.host = "127.0.0.1"
        serverConfiguration.port = 0
        serverConfiguration.eventLoopThreads = 2
        do {
            server = try RPCServer(configuration: serverConfiguration, methods: service.methods)
            try server.start()
            clients = try EventLoopGroup(threads: 2, namePrefix: "alert-test-client")
        } catch {
            service.close()
            database.close()
            throw error
        }
        service.start()
    }

    func connect() async throws -> RPCClientConnection {
        try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: clients.next())
    }

    /// Stops the server (ending every stream), then the service (the alert thread finishes what was queued and
    /// writes its last batch), then closes the database and the client loops.
    func shutdown() async {
        await server.shutdownNow()
        service.close()
        database.close()
        await clients.shutdownGracefully()
    }

    // MARK: Settings and prices

    /// Saves `rules` (symbol → rule) for `device` through the settings store; returns once the change is durable
    /// and the alert thread has been told (the store calls its observers before completing).
    @discardableResult
    func save(_ device: String, _ rules: [String: V1.AlertRule], remove: [String] = []) async throws -> V1.Settings {
        try await service.settings.save(V1.SaveSettingsRequest(deviceID: device, setRules: rules, removeSymbols: remove))
    }

    /// Saves a BTC rule above `threshold` for `device`, then prices BTC at `price` (below it) and waits for that,
    /// the service's first tick, to be evaluated: the rule is armed, and what a test publishes next is judged
    /// against it.
    func arm(_ device: String, above threshold: String, at price: String) async throws {
        try await save(device, ["BTC": rule(above: threshold)])
        publish("BTC", price)
        try #require(await waitForEvaluated(1))
    }

    /// Publishes one tick through the hub, as a feed would; the alert thread gets it before this returns.
    func publish(_ symbol: String, _ price: String) {
        let applied = service.hub.publish([PriceFixtures.tick(symbol, price)])
        precondition(applied == 1, "the hub refused a test tick")
    }

    // MARK: Observing the alert thread

    var stats: AlertStats { service.alerts.stats }

    /// Waits (bounded) until the alert thread registered `count` live StreamAlerts calls.
    func waitForSubscribers(_ count: Int) async -> Bool {
        await eventually { self.stats.subscribers == count }
    }

    /// Waits (bounded) until the alert thread has evaluated `count` ticks in total.
    func waitForEvaluated(_ count: Int) async -> Bool {
        await eventually { self.stats.ticksEvaluated == count }
    }

    /// Waits (bounded) until the alert thread has fired `count` alerts in total.
    func waitForFired(_ count: Int) async -> Bool {
        guard await eventually({ self.stats.alertsFired == count }) else { return false }
        // Alerts are counted while their round runs, and the round writes their outbox entries at its end: a call
        // the alert thread answers in a later round comes back after that write, so a test reads what was fired.
        await passThroughAlertThread()
        return true
    }

    /// Returns once the alert thread has finished the round it is in (an UnregisterDevice of a device that never
    /// registered: it goes through the thread's next round and changes nothing).
    func passThroughAlertThread() async {
        guard let connection = try? await connect() else { return }
        defer { connection.close() }
        _ = try? await connection.unary(V1.CoinWatch.unregisterDevice, V1.UnregisterDeviceRequest(deviceID: "pass-through"))
    }

    /// Every outbox entry in LevelDB, decoded, in key order.
    func outbox() throws -> [V1.Alert] {
        try database.scan(prefix: AlertStorage.outboxPrefix).map { try V1.Alert(serializedBytes: $0.value) }
    }

    /// Waits (bounded) until the outbox in LevelDB satisfies `condition`.
    func waitForOutbox(_ condition: @escaping ([V1.Alert]) -> Bool) async -> Bool {
        await eventually { (try? self.outbox()).map(condition) ?? false }
    }
}

/// Runs `body` with a fresh service in a new temporary directory, then shuts it down (also when `body` throws) and
/// removes the directory.
func withAlertService<R>(
    configure: (inout CoinWatchService.Configuration) -> Void = { _ in },
    _ body: (AlertServiceHarness) async throws -> R
) async throws -> R {
    try await withTemporaryDirectory(prefix: "alert-test") { directory in
        let harness = try AlertServiceHarness(path: databasePath(in: directory), configure: configure)
        do {
            let result = try await body(harness)
            await harness.shutdown()
            return result
        } catch {
            await harness.shutdown()
            throw error
        }
    }
}

/// The wall clock in milliseconds, as the alert thread stamps alerts.
func wallClockMs() -> Int64 {
    WallClock.milliseconds()
}

extension V1.Alert {
    var thresholdText: String { PriceFixtures.exact(threshold)?.description ?? "<none>" }
    var priceText: String { PriceFixtures.exact(price)?.description ?? "<none>" }

    /// `SYMBOL direction threshold @ price`, for compact expectations.
    var summary: String {
        let side = switch direction {
        case .above: "above"
        case .below: "below"
        default: "unspecified"
        }
        return "\(symbol) \(side) \(thresholdText) @ \(priceText)"
    }
}
