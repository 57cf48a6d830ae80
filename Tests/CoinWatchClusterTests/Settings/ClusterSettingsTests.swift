@testable import CoinWatchCluster
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchService
import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

/// Settings replicated through the settings bucket between in-process nodes, each with its own LevelDB and store.
/// nats.c calls block, so nodes are started and stopped on threads of their own (`onOwnThread`).
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"), .serialized)
struct ClusterSettingsTests {
    final class Node: Sendable {
        let directory: TemporaryDirectory
        let database: Database
        let store: SettingsStore
        let connection: NATSConnection
        let replication: ClusterSettings

        init(_ urls: String) throws {
            directory = try TemporaryDirectory(prefix: "cluster-settings")
            database = try Database(path: directory.path + "/db")
            store = try SettingsStore(database: database)
            connection = try testConnection(urls)
            let jetStream = try JetStream(connection: connection)
            let bucket = try jetStream.keyValue(.init(name: ClusterLayout.settingsBucket))
            replication = ClusterSettings(bucket: bucket, store: store, credentials: nil, logger: .disabled)
            try replication.start()
        }

        func stop() {
            replication.stop()
            store.close()
            connection.close()
            database.close()
        }

        func version(_ device: String) -> UInt64 {
            store.settings(for: try! DeviceID(validating: device))?.version ?? 0
        }
    }

    static func save(_ device: String, _ symbol: String, above: Int64, expecting version: UInt64? = nil)
        -> V1.SaveSettingsRequest
    {
        var request = V1.SaveSettingsRequest(deviceID: device)
        request.setRules[symbol] = V1.AlertRule(above: V1.Decimal(ExactDecimal(above)))
        request.precondition = version.map { .expectedVersion($0) }
        return request
    }

    @Test func aSaveOnOneNodeIsReadableOnTheOthers() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<3).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        let saved = try await nodes[0].store.save(Self.save("phone-1", "BTC", above: 100))
        #expect(saved.version == 1)
        let everywhere = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { nodes.allSatisfy { $0.version("phone-1") == 1 } }
        #expect(everywhere)
        // A save on another node builds on the replicated version.
        let second = try await nodes[2].store.save(Self.save("phone-1", "ETH", above: 5, expecting: 1))
        #expect(second.version == 2)
        #expect(second.rules.keys.sorted() == ["BTC", "ETH"])
        let caughtUp = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { nodes.allSatisfy { $0.version("phone-1") == 2 } }
        #expect(caughtUp)
        // A delete is replicated too.
        #expect(try await nodes[1].store.delete(V1.DeleteSettingsRequest(deviceID: "phone-1")))
        let deleted = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { $0.store.settings(for: try! DeviceID(validating: "phone-1")) == nil }
        }
        #expect(deleted)
    }

    @Test func twoNodesSavingFromTheSameVersionCannotBothSucceed() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        _ = try await nodes[0].store.save(Self.save("phone-2", "BTC", above: 1))
        for round in 1...10 {
            let version = UInt64(round)
            // Both nodes know `version` before they race.
            let known = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { nodes.allSatisfy { $0.version("phone-2") == version } }
            #expect(known, "round \(round)")
            async let first = Self.outcome(nodes[0].store, Self.save("phone-2", "BTC", above: Int64(round) * 10, expecting: version))
            async let second = Self.outcome(nodes[1].store, Self.save("phone-2", "ETH", above: Int64(round) * 10, expecting: version))
            let outcomes = await [first, second]
            let succeeded = outcomes.filter { $0 == nil }.count
            let aborted = outcomes.filter { $0 == .aborted }.count
            #expect(succeeded == 1 && aborted == 1, "round \(round): \(outcomes)")
        }
        // And a save that does not expect a version is never lost: it lands on top of the other node's.
        async let first = Self.outcome(nodes[0].store, Self.save("phone-2", "SOL", above: 7))
        async let second = Self.outcome(nodes[1].store, Self.save("phone-2", "ADA", above: 7))
        let outcomes = await [first, second]
        #expect(outcomes == [nil, nil])
        let merged = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            nodes.allSatisfy { node in
                let rules = node.store.settings(for: try! DeviceID(validating: "phone-2"))?.rules.keys.sorted() ?? []
                return rules.contains("SOL") && rules.contains("ADA")
            }
        }
        #expect(merged)
        #expect(nodes[0].version("phone-2") == nodes[1].version("phone-2"))
    }

    @Test func aNodeThatStartsLaterReadsEverySavedDevice() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let first = try await onOwnThread { try Node(urls) }
        defer { first.stop() }
        for index in 0..<50 {
            _ = try await first.store.save(Self.save("phone-\(index)", "BTC", above: Int64(index + 1)))
        }
        _ = try await first.store.save(Self.save("phone-0", "ETH", above: 1))
        let late = try await onOwnThread { try Node(urls) }
        defer { late.stop() }
        let caughtUp = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { (0..<50).allSatisfy { late.version("phone-\($0)") >= 1 } && late.version("phone-0") == 2 }
        #expect(caughtUp)
    }

    static func outcome(_ store: SettingsStore, _ request: V1.SaveSettingsRequest) async -> RPCError.Code? {
        do {
            _ = try await store.save(request)
            return nil
        } catch {
            return error.code
        }
    }
}
