@testable import CoinWatchCluster
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchService
import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

/// A whole node in process: a service on its own LevelDB, attached to NATS as coinwatchd attaches it. nats.c calls
/// block, so the node is opened and closed on a thread of its own (`onOwnThread`).
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"))
struct ClusterNodeTests {
    /// The service routes prices through the bus, writes settings through the bucket and relays alerts through the
    /// relay, so it owns them; none of them may hold the service back, or a closed node (and its NATS connection,
    /// its subscriptions and their threads) would live as long as the process.
    @Test("a closed node and its service are let go, and with them the NATS connection")
    func aClosedNodeIsLetGo() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let servers = nats.urls.split(separator: ",").map(String.init)
        let released = try await onOwnThread { () throws -> [String] in
            weak var node: ClusterNode?
            weak var service: CoinWatchService?
            weak var connection: NATSConnection?
            let directory = try TemporaryDirectory(prefix: "cluster-node")
            let database = try Database(path: directory.path + "/db")
            defer { database.close() }
            do {
                var configuration = CoinWatchService.Configuration()
                configuration.startsFeed = false
                let opened = try CoinWatchService(database: database, configuration: configuration)
                let joined = try ClusterNode(configuration: .init(servers: servers, nodeID: "a"), logger: .disabled)
                try joined.attach(opened, feedName: "") { throw ClusterError(code: .failed, message: "no feed here") }
                opened.start()
                joined.start()
                // Every part in use: a tick crosses the bus and a save goes through the bucket.
                let tick = try PriceTick(validating: V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 100, scale: 0)), field: "tick")
                _ = opened.hub.publish([tick])
                var request = V1.SaveSettingsRequest(deviceID: "phone-1")
                request.setRules["BTC"] = V1.AlertRule(above: V1.Decimal(mantissa: 200, scale: 0))
                let saved = DispatchSemaphore(value: 0)
                opened.settings.save(request) { _ in saved.signal() }
                saved.wait()
                joined.close()
                opened.close()
                node = joined
                service = opened
                connection = joined.connection
            }
            // A thread the node ran may still be returning from its closure, which holds the node until then.
            _ = eventuallySync(timeout: .seconds(30)) { node == nil && service == nil && connection == nil }
            return [("node", node == nil), ("service", service == nil), ("connection", connection == nil)]
                .filter { !$0.1 }.map(\.0)
        }
        #expect(released.isEmpty, "still alive: \(released)")
    }
}
