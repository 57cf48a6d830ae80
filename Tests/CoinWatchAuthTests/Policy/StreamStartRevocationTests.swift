@testable import CoinWatchAuth
import CoinWatchProto
import CoinWatchRPC
import Synchronization
import Testing

/// Asks the real authoriser, then revokes the key the call carried: a revocation landing between the dispatcher's
/// check and the stream's start.
final class RevokingAuthorizer: CallAuthorizer {
    let inner: Authorizer
    let revoke: @Sendable () -> Void

    init(_ inner: Authorizer, revoke: @escaping @Sendable () -> Void) {
        self.inner = inner
        self.revoke = revoke
    }

    func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
        try inner.authorize(request)
        revoke()
    }
}

@Suite("a stream whose credential is revoked as it starts", .timeLimit(.minutes(1)))
struct StreamStartRevocationTests {
    @Test("is ended UNAUTHENTICATED, not left running")
    func revokedWhileStarting() async throws {
        let harness = try AuthHarness()
        let (key, token) = try harness.store.createKey(name: "reader", scopes: ScopeSet([.pricesRead]))
        let store = harness.store
        let stream: RPCMethod = .serverStream(V1.CoinWatch.streamPrices, onLoop: { (_: V1.StreamPricesRequest, stream) in
            // Stays open until ended from outside.
            stream.send(V1.PriceUpdate())
        })
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 1
        let server = try RPCServer(
            configuration: configuration, methods: harness.authorizer.guardingStreams([stream]),
            authorizer: RevokingAuthorizer(harness.authorizer) { _ = try? store.revokeKey(key.id) })
        try server.start()
        let group = try EventLoopGroup(threads: 1, namePrefix: "revoke-start")
        var options = RPCClientConnection.Options()
        options.authToken = token
        let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next(), options: options)
        let ended = await withCheckedContinuation { (continuation: CheckedContinuation<RPCError?, Never>) in
            client.startStream(
                method: V1.CoinWatch.streamPrices.path, payload: V1.StreamPricesRequest(symbols: ["BTC"]).serializedBytes(),
                onMessage: { _ in }, onEnd: { continuation.resume(returning: $0) })
        }
        #expect(ended == RPCError(code: .unauthenticated, message: "the credential is not valid (unknown, revoked or wrong)"),
                "\(String(describing: ended))")
        client.close()
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }
}
