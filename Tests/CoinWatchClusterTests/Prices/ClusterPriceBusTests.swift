@testable import CoinWatchCluster
import CoinWatchLogging
import CoinWatchModel
import CoinWatchService
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// The price bus between in-process nodes (each its own NATS connection and hub) on one nats-server.
/// nats.c calls block, so nodes are started and stopped on threads of their own (`onOwnThread`).
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"), .serialized)
struct ClusterPriceBusTests {
    /// One node: its connection, its hub (whose alert hook records every tick it applies) and its bus.
    final class Node: Sendable {
        let connection: NATSConnection
        let jetStream: JetStream
        let hub: PriceHub
        let bus: ClusterPriceBus
        let applied = Recorder()

        init(_ urls: String) throws {
            connection = try testConnection(urls)
            jetStream = try JetStream(connection: connection)
            try jetStream.ensureStream(.init(
                name: ClusterLayout.priceStream, subjects: [ClusterLayout.priceSubjects],
                maxAgeNs: ClusterLayout.priceStreamMaxAgeNs))
            let lastPrices = try jetStream.keyValue(.init(name: ClusterLayout.lastPricesBucket))
            let applied = self.applied
            hub = try PriceHub(onTicks: { ticks in applied.ticks.withLock { $0 += ticks } })
            bus = ClusterPriceBus(
                connection: connection, jetStream: jetStream, lastPrices: lastPrices, hub: hub, logger: .disabled)
            try bus.start()
        }

        func stop() {
            bus.stop()
            hub.close()
            connection.close()
        }

        var prices: [String] { applied.ticks.withLock { $0.map { "\($0.price)" } } }
    }

    final class Recorder: Sendable {
        let ticks = Mutex<[PriceTick]>([])
    }

    static func tick(_ price: Int, _ symbol: String = "BTC") -> PriceTick {
        PriceTick(symbol: try! Symbol(validating: symbol), price: ExactDecimal(Int64(price)), timeMs: 1_700_000_000_000 + Int64(price))
    }

    @Test func aTickPublishedOnOneNodeReachesEveryNodeOnceInOrder() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<3).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        // Published on node 0 only: every node, node 0 included, applies each tick exactly once, in order.
        for price in 1...200 {
            #expect(nodes[0].hub.publish([Self.tick(price)]) == 1)
        }
        let expected = (1...200).map { "\($0)" }
        let arrived = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { nodes.allSatisfy { $0.prices.count >= 200 } }
        #expect(arrived)
        for (index, node) in nodes.enumerated() {
            #expect(node.prices == expected, "node \(index)")
        }
        // Then from node 2: the same, appended after.
        #expect(nodes[2].hub.publish((201...250).map { Self.tick($0) }) == 50)
        let more = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { nodes.allSatisfy { $0.prices.count >= 250 } }
        #expect(more)
        for (index, node) in nodes.enumerated() {
            #expect(node.prices == (1...250).map { "\($0)" }, "node \(index)")
            #expect(node.hub.latestPrice(of: try Symbol(validating: "BTC"))?.price == ExactDecimal(Int64(250)))
        }
        #expect(nodes.allSatisfy { $0.bus.stats.undecodable == 0 })
    }

    @Test func aNodeThatStartsLaterServesTheLastPrices() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let first = try await onOwnThread { try Node(urls) }
        defer { first.stop() }
        first.hub.publish([Self.tick(10, "BTC"), Self.tick(20, "ETH"), Self.tick(11, "BTC")])
        let arrived = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { first.prices.count == 3 }
        #expect(arrived)
        // The bucket write follows the publish on the same thread: wait until it is readable.
        let bucket = try await onOwnThread { try first.jetStream.keyValue(.init(name: ClusterLayout.lastPricesBucket)) }
        let stored = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { (try? await onOwnThread { try bucket.entries().count }) == 2 }
        #expect(stored)
        let late = try await onOwnThread { try Node(urls) }
        defer { late.stop() }
        #expect(late.hub.latestPrice(of: try Symbol(validating: "BTC"))?.price == ExactDecimal(Int64(11)))
        #expect(late.hub.latestPrice(of: try Symbol(validating: "ETH"))?.price == ExactDecimal(Int64(20)))
    }
}
