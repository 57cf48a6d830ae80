import CoinWatchAuth
@testable import CoinWatchCluster
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

/// Credentials replicated through the credentials bucket between in-process nodes, each with its own LevelDB and
/// credential store. nats.c calls block, so nodes are started and stopped on threads of their own (`onOwnThread`).
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"), .serialized)
struct ClusterCredentialsTests {
    final class Node: Sendable {
        let directory: TemporaryDirectory
        let database: Database
        let credentials: CredentialStore
        let connection: NATSConnection
        let replication: ClusterCredentials

        /// A node; `before` runs on its store before it joins (a key made offline, say).
        init(_ urls: String, before: (CredentialStore) throws -> Void = { _ in }) throws {
            directory = try TemporaryDirectory(prefix: "cluster-credentials")
            database = try Database(path: directory.path + "/db")
            credentials = try CredentialStore(database: database)
            try before(credentials)
            connection = try testConnection(urls)
            let jetStream = try JetStream(connection: connection)
            let bucket = try jetStream.keyValue(.init(name: ClusterLayout.credentialsBucket))
            replication = ClusterCredentials(bucket: bucket, credentials: credentials, logger: .disabled)
            try replication.start()
        }

        func stop() {
            replication.stop()
            connection.close()
            database.close()
        }

        func authenticate(_ token: String) -> Result<Principal, CredentialFailure> {
            do {
                return credentials.authenticate(try Credential(token: Array(token.utf8)))
            } catch {
                return .failure(error)
            }
        }
    }

    static func isKey(_ result: Result<Principal, CredentialFailure>) -> Bool {
        if case .success(.key) = result { true } else { false }
    }

    @Test func aKeyMadeOnOneNodeWorksOnTheOthersUntilItIsRevokedThere() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        let (key, token) = try nodes[0].credentials.createKey(name: "ops", scopes: ScopeSet([.admin]))
        #expect(await eventually(timeout: .seconds(30)) { Self.isKey(nodes[1].authenticate(token)) })
        let generation = nodes[1].credentials.generation
        _ = try nodes[0].credentials.revokeKey(key.id)
        #expect(await eventually(timeout: .seconds(30)) { nodes[1].authenticate(token) == .failure(.revoked) })
        #expect(nodes[1].credentials.generation > generation, "open sessions on the other node were not told")
        // The other node's own copy holds the revocation too.
        let reopened = try CredentialStore(database: nodes[1].database)
        #expect(reopened.listKeys().first { $0.id == key.id }?.revoked == true)
    }

    @Test func ofTwoNodesClaimingADeviceOneWinsAndARetryOfTheWinnerIsAccepted() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        let device = try DeviceID(validating: "phone-1")
        let claims = try nodes.map { try #require(try $0.credentials.beginClaim(device, issuedBy: "SaveSettings")) }
        let outcomes = await withTaskGroup(of: (Int, AuthError?).self) { group in
            for (index, node) in nodes.enumerated() {
                let claim = claims[index]
                group.addTask {
                    do throws(AuthError) {
                        try node.replication.create(claim.recordKey, claim.recordValue)
                        return (index, nil)
                    } catch {
                        return (index, error)
                    }
                }
            }
            return await group.reduce(into: [(Int, AuthError?)]()) { $0.append($1) }
        }
        let winners = outcomes.filter { $0.1 == nil }.map(\.0)
        #expect(winners.count == 1, "\(outcomes)")
        let winner = try #require(winners.first)
        let loser = 1 - winner
        let lost = outcomes.first { $0.0 == loser }?.1
        #expect(lost?.code == .alreadyClaimed)
        #expect(lost?.message == "the device was claimed on another node; send its token")
        #expect(lost?.rpcError.code == .unauthenticated)
        try nodes[winner].replication.create(claims[winner].recordKey, claims[winner].recordValue)
        nodes[loser].credentials.finishClaim(claims[loser], stored: false)
        nodes[winner].credentials.finishClaim(claims[winner], stored: true)
        // The loser's node learns the winner's secret: its token works there, the loser's does not.
        #expect(await eventually(timeout: .seconds(30)) {
            if case .success(.device) = nodes[loser].authenticate(claims[winner].token) { true } else { false }
        })
        #expect(nodes[loser].authenticate(claims[loser].token) == .failure(.wrongSecret))
    }

    @Test func aResetDeviceIsFreeEverywhereAndCanBeClaimedAgain() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let nodes = try await onOwnThread { try (0..<2).map { _ in try Node(urls) } }
        defer { nodes.forEach { $0.stop() } }
        let device = try DeviceID(validating: "phone-2")
        let first = try #require(try nodes[0].credentials.beginClaim(device, issuedBy: "SaveSettings"))
        try nodes[0].replication.create(first.recordKey, first.recordValue)
        nodes[0].credentials.finishClaim(first, stored: true)
        #expect(await eventually(timeout: .seconds(30)) { nodes[1].credentials.isClaimed(device) })
        let reset = try nodes[1].credentials.resetDevice(device, issueSecret: false)
        #expect(reset.hadSecret)
        #expect(await eventually(timeout: .seconds(30)) { !nodes[0].credentials.isClaimed(device) })
        #expect(nodes[0].authenticate(first.token) == .failure(.unclaimedDevice))
        // The removed record is an empty value: a new claim is not refused by it.
        let second = try #require(try nodes[0].credentials.beginClaim(device, issuedBy: "SaveSettings"))
        try nodes[0].replication.create(second.recordKey, second.recordValue)
    }

    @Test func aKeyMadeBeforeANodeJoinedIsOfferedToTheCluster() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let urls = nats.urls
        let made = try await onOwnThread { () throws -> (Node, String) in
            var token = ""
            let node = try Node(urls) { store in
                token = try store.createKey(name: "bootstrap", scopes: ScopeSet([.admin])).token
            }
            return (node, token)
        }
        let other = try await onOwnThread { try Node(urls) }
        defer { made.0.stop(); other.stop() }
        #expect(Self.isKey(other.authenticate(made.1)))
    }
}
