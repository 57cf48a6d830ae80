@testable import CoinWatchCluster
import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
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

        init(_ urls: String, maxDelayMs: Int64 = 10_000, batchWaitMs: Int64 = 50) throws {
            connection = try testConnection(urls)
            jetStream = try JetStream(connection: connection)
            try jetStream.ensureStream(.init(
                name: ClusterLayout.priceStream, subjects: [ClusterLayout.priceSubjects],
                maxAgeNs: ClusterLayout.priceStreamMaxAgeNs))
            let lastPrices = try jetStream.keyValue(.init(name: ClusterLayout.lastPricesBucket))
            let applied = self.applied
            hub = try PriceHub(onTicks: { ticks in
                applied.ticks.withLock { $0 += ticks }
                applied.deliveries.withLock { $0.append(ticks.count) }
            })
            bus = ClusterPriceBus(
                connection: connection, jetStream: jetStream, lastPrices: lastPrices, hub: hub, logger: .disabled,
                maxDelayMs: maxDelayMs, batchWaitMs: batchWaitMs)
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
        /// How many ticks each delivery to the hub carried.
        let deliveries = Mutex<[Int]>([])
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

    @Test("a batch published on one node reaches every node's hub as one delivery, as it does on a single node")
    func aBatchCrossesTheBusWhole() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        // A wait far longer than any busy machine needs, so the test sees the batch whole or not at all.
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls, batchWaitMs: 30_000) } }
        defer { nodes.forEach { $0.stop() } }
        let symbols = (0..<40).map { "B\($0)" }
        #expect(nodes[0].hub.publish(symbols.enumerated().map { Self.tick(100 + $0.offset, $0.element) }) == 40)
        let arrived = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { $0.prices.count >= 40 }
        }
        #expect(arrived)
        for (index, node) in nodes.enumerated() {
            #expect(node.applied.deliveries.withLock { $0 } == [40], "node \(index)")
            #expect(node.prices == (100..<140).map { "\($0)" }, "node \(index)")
        }
    }

    @Test("a symbol that turns stale on the node whose feed quotes it turns stale on every node, sources kept")
    func staleAndSourcesCrossTheBus() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        let btc = try Symbol(validating: "BTC")
        var quoted = Self.tick(10)
        quoted.sources = 3
        #expect(nodes[0].hub.publish([quoted]) == 1)
        let first = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { $0.prices.count >= 1 }
        }
        #expect(first)
        // The feed's node marks it stale (its aggregator found no fresh source), then the next price clears it.
        #expect(nodes[0].hub.markStale([btc]) == 1)
        #expect(nodes[0].hub.publish([Self.tick(11)]) == 1)
        let all = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { $0.prices.count >= 3 }
        }
        #expect(all)
        for (index, node) in nodes.enumerated() {
            let ticks = node.applied.ticks.withLock { $0 }
            #expect(ticks.map(\.isStale) == [false, true, false], "node \(index)")
            #expect(ticks.map(\.sources) == [3, 0, 0], "node \(index)")
            #expect(ticks.map { "\($0.price)" } == ["10", "10", "11"], "node \(index)")
        }
        // Any node may mark it (what crosses the bus is applied in one order everywhere); once it is stale,
        // marking it again sends nothing.
        #expect(nodes[1].hub.markStale([btc]) == 1)
        let stale = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { $0.hub.latestPrice(of: btc)?.isStale == true }
        }
        #expect(stale)
        #expect(nodes[0].hub.markStale([btc]) == 0)
    }

    @Test("a node that missed a symbol turning stale learns it from the snapshot it reads after reconnecting")
    func theSnapshotCarriesAStaleTurnTheNodeMissed() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let node = try await onOwnThread { try Node(urls) }
        defer { node.stop() }
        let eth = try Symbol(validating: "ETH")
        // The node has ETH 20 (applied here only); the bucket says ETH 20 turned stale, as another node's bus wrote
        // it while this one was away.
        node.hub.deliver([Self.tick(20, "ETH")])
        var stale = Self.tick(20, "ETH")
        stale.isStale = true
        let bytes = stale.update.serializedBytes()
        try await onOwnThread {
            try node.jetStream.publishAsync(node.bus.lastPrices.subject("ETH"), bytes)
            try node.jetStream.waitForAsyncPublishes(timeoutMs: 10_000)
        }
        try await onOwnThread { node.bus.loadSnapshot() }
        #expect(node.hub.latestPrice(of: eth)?.isStale == true)
        #expect(node.applied.ticks.withLock { $0.map(\.isStale) } == [false, true])
        // Read again: nothing new, nothing applied twice.
        try await onOwnThread { node.bus.loadSnapshot() }
        #expect(node.applied.ticks.withLock { $0.count } == 2)
    }

    @Test func aSnapshotTickSupersedesWhatIsNewer() {
        let fresh = Self.tick(20, "ETH")
        var stale = fresh
        stale.isStale = true
        var later = Self.tick(21, "ETH")
        later.timeMs = fresh.timeMs + 1
        #expect(ClusterPriceBus.snapshotTick(later, supersedes: fresh))
        #expect(ClusterPriceBus.snapshotTick(later, supersedes: stale))
        #expect(ClusterPriceBus.snapshotTick(stale, supersedes: fresh))
        #expect(!ClusterPriceBus.snapshotTick(fresh, supersedes: stale))
        #expect(!ClusterPriceBus.snapshotTick(fresh, supersedes: fresh))
        #expect(!ClusterPriceBus.snapshotTick(stale, supersedes: stale))
        #expect(!ClusterPriceBus.snapshotTick(fresh, supersedes: later))
    }

    @Test("the receiver waits for the rest of a batch that arrives in pieces, and no longer")
    func theReceiverWaitsForTheRestOfABatch() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let node = try await onOwnThread { try Node(urls, batchWaitMs: 30_000) }
        defer { node.stop() }
        try await onOwnThread {
            let publisher = try testConnection(urls)
            defer { publisher.close() }
            let jetStream = try JetStream(connection: publisher)
            func send(_ price: Int, left: Int) throws {
                try jetStream.publishAsync(
                    ClusterLayout.priceSubject("BTC"), Self.tick(price).message.serializedBytes(),
                    headers: [(ClusterLayout.sentHeader, "\(WallClock.milliseconds())"), (ClusterLayout.batchLeftHeader, "\(left)")])
                try jetStream.waitForAsyncPublishes(timeoutMs: 10_000)
            }
            // A batch of three whose messages come apart.
            try send(1, left: 2)
            Thread.sleep(forTimeInterval: 0.3)
            try send(2, left: 1)
            Thread.sleep(forTimeInterval: 0.3)
            try send(3, left: 0)
        }
        // Delivered well before the 30 s bound: the last message of the batch ends the wait.
        let arrived = await eventually(timeout: .seconds(20), interval: .milliseconds(50)) { node.prices.count >= 3 }
        #expect(arrived)
        #expect(node.prices == ["1", "2", "3"])
        #expect(node.applied.deliveries.withLock { $0 } == [3])
    }

    @Test("a tick that reaches a node later than the bound is dropped; fresh and unstamped ones are applied")
    func aStaleTickIsDroppedByTheReceiver() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let node = try await onOwnThread { try Node(urls) }
        defer { node.stop() }
        try await onOwnThread {
            let publisher = try testConnection(urls)
            defer { publisher.close() }
            let jetStream = try JetStream(connection: publisher)
            let subject = ClusterLayout.priceSubject("BTC")
            let now = WallClock.milliseconds()
            // Handed to the bus a minute ago (waited out a partition), then one just now, then one without a stamp.
            try jetStream.publishAsync(subject, Self.tick(1).message.serializedBytes(),
                                       headers: [(ClusterLayout.sentHeader, "\(now - 60_000)")])
            try jetStream.publishAsync(subject, Self.tick(2).message.serializedBytes(),
                                       headers: [(ClusterLayout.sentHeader, "\(now)")])
            try jetStream.publishAsync(subject, Self.tick(3).message.serializedBytes())
            try jetStream.waitForAsyncPublishes(timeoutMs: 10_000)
        }
        let arrived = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { node.prices.count >= 2 }
        #expect(arrived)
        #expect(node.prices == ["2", "3"], "the stale tick came first on the same subject, so it was seen and dropped")
        #expect(node.bus.stats.staleDropped == 1)
    }

    @Test("ticks published while the connection is down wait in the bus, and those older than the bound are dropped")
    func ticksQueuedThroughAnOutageAgeOut() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let (cut, other) = try await onOwnThread { (try Node(urls, maxDelayMs: 5_000), try Node(urls)) }
        defer { cut.stop(); other.stop() }
        nats.servers[0].kill()
        let down = await eventually(timeout: .seconds(30), interval: .milliseconds(20)) { cut.connection.state != .connected }
        #expect(down)
        #expect(cut.hub.publish([Self.tick(10)]) == 1)
        // Past the bound while still cut off, then the server comes back and a fresh tick follows (which has the
        // whole bound, 5 s, to be published: a busy machine cannot make it stale).
        try await Task.sleep(for: .milliseconds(5_500))
        try await nats.servers[0].start()
        let back = await eventually(timeout: .seconds(30), interval: .milliseconds(20)) {
            cut.connection.state == .connected && other.connection.state == .connected
        }
        #expect(back)
        #expect(cut.hub.publish([Self.tick(11)]) == 1)
        let arrived = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { other.prices.contains("11") }
        #expect(arrived)
        #expect(!other.prices.contains("10"), "\(other.prices)")
        #expect(cut.bus.stats.staleDropped == 1)
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
        #expect(late.hub.latestPrice(of: try Symbol(validating: "ETH"))?.isStale == false)
    }

    @Test func aNodeThatStartsLaterSeesAStaleSymbolStale() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let first = try await onOwnThread { try Node(urls) }
        defer { first.stop() }
        let eth = try Symbol(validating: "ETH")
        first.hub.publish([Self.tick(20, "ETH")])
        let priced = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { first.prices.count == 1 }
        #expect(priced)
        #expect(first.hub.markStale([eth]) == 1)
        let marked = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            first.hub.latestPrice(of: eth)?.isStale == true
        }
        #expect(marked)
        // The bucket write follows the publish on the same thread: wait until it holds the stale tick.
        let bucket = try await onOwnThread { try first.jetStream.keyValue(.init(name: ClusterLayout.lastPricesBucket)) }
        let stored = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            (try? await onOwnThread { try bucket.entries().compactMap { ClusterPriceBus.decode($0.value) } })?.first?.isStale == true
        }
        #expect(stored)
        let late = try await onOwnThread { try Node(urls) }
        defer { late.stop() }
        #expect(late.hub.latestPrice(of: eth)?.isStale == true)
        #expect(late.hub.latestPrice(of: eth)?.price == ExactDecimal(Int64(20)))
    }
}
