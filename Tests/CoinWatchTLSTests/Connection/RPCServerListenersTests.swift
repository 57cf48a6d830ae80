import CoinWatchProto
import CoinWatchRPC
import CoinWatchTLS
import CoinWatchTestSupport
import Synchronization
import Testing

/// Keeps the peer identity of every call it is asked about, and allows them all.
final class IdentityRecorder: CallAuthorizer {
    let seen = Mutex<[String]>([])

    func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
        seen.withLock { $0.append(request.context.peerIdentity) }
    }
}

/// One server on several listeners, each with TLS of its own: a plaintext loopback listener beside a TLS-only
/// one, sharing loops and methods.
@Suite("RPC server with several listeners")
struct RPCServerListenersTests {
    /// A free loopback port, one loop, and a handshake timeout a busy machine cannot exhaust.
    static var loopbackConfiguration: RPCServer.Configuration {
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 1
        configuration.handshakeTimeout = .seconds(60)
        return configuration
    }

    @Test("a plaintext listener and a TLS-only one serve their own kind of client and refuse the other")
    func plaintextBesideTLS() async throws {
        let pki = try await TestCertificates.shared()
        var configuration = Self.loopbackConfiguration
        let context = try ReloadableTLSContext(.server(
            certificateChainFile: pki.server.certificateFile, privateKeyFile: pki.server.privateKeyFile,
            applicationProtocols: [RPCProtocol.applicationProtocol]))
        configuration.additionalListeners = [
            RPCServer.Listener(host: "127.0.0.1", port: 0, tls: TLSServerTransforms(context: context)),
        ]
        let server = try RPCServer(
            configuration: configuration,
            methods: [.unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) })])
        try server.start()
        let ports = server.ports
        #expect(ports.count == 2)
        #expect(ports[0] == server.port)
        #expect(ports[0] != ports[1])

        let group = try EventLoopGroup(threads: 1, namePrefix: "listeners-cli")
        var plainOptions = RPCClientConnection.Options()
        plainOptions.connectTimeout = .seconds(60)
        var tlsOptions = plainOptions
        tlsOptions.transform = TLSClientTransforms(context: try pki.clientContext(protocols: ["coinwatch"]), serverName: "localhost")

        let plain = try await RPCClientConnection.connect(host: "127.0.0.1", port: ports[0], on: group.next(), options: plainOptions)
        let secure = try await RPCClientConnection.connect(host: "127.0.0.1", port: ports[1], on: group.next(), options: tlsOptions)
        #expect(try await plain.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        #expect(try await secure.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)

        let plaintextOnTLS = await #expect(throws: RPCError.self) {
            _ = try await RPCClientConnection.connect(host: "127.0.0.1", port: ports[1], on: group.next(), options: plainOptions)
        }
        #expect(plaintextOnTLS?.code == .failedPrecondition)
        let tlsOnPlaintext = await #expect(throws: RPCError.self) {
            _ = try await RPCClientConnection.connect(host: "127.0.0.1", port: ports[0], on: group.next(), options: tlsOptions)
        }
        #expect(tlsOnPlaintext?.code == .unavailable)

        plain.close()
        secure.close()
        await group.shutdownGracefully()
        await server.shutdownGracefully()
        // Both listeners are closed by the shutdown.
        #expect(throws: RawClientError.self) { _ = try RawClient(port: ports[0]) }
        #expect(throws: RawClientError.self) { _ = try RawClient(port: ports[1]) }
    }

    @Test("a listener that cannot bind fails the start and leaves the others closed")
    func bindFailureClosesTheRest() async throws {
        let blocker = try RPCServer(configuration: Self.loopbackConfiguration, methods: [])
        let taken = try blocker.start()
        var configuration = Self.loopbackConfiguration
        configuration.additionalListeners = [RPCServer.Listener(host: "127.0.0.1", port: taken)]
        let server = try RPCServer(configuration: configuration, methods: [])
        #expect(throws: IOError.self) { try server.start() }
        #expect(server.ports.isEmpty)
        await server.shutdownNow()
        await blocker.shutdownNow()
    }

    @Test("with client certificates asked for, the authorizer sees each call's verified certificate subject")
    func peerIdentityReachesTheAuthorizer() async throws {
        let pki = try await TestCertificates.shared()
        var configuration = Self.loopbackConfiguration
        var tls = TLSConfiguration.server(
            certificateChainFile: pki.server.certificateFile, privateKeyFile: pki.server.privateKeyFile,
            applicationProtocols: [RPCProtocol.applicationProtocol])
        tls.caFile = pki.caFile
        tls.clientCertificates = .optional
        configuration.tls = TLSServerTransforms(context: try ReloadableTLSContext(tls))
        let recorder = IdentityRecorder()
        let server = try RPCServer(
            configuration: configuration,
            methods: [.unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) })],
            authorizer: recorder)
        try server.start()
        let group = try EventLoopGroup(threads: 1, namePrefix: "identity-cli")
        for identity in [pki.client, nil] {
            var options = RPCClientConnection.Options()
            options.connectTimeout = .seconds(60)
            let context = try pki.clientContext(protocols: ["coinwatch"]) { configuration in
                configuration.certificateChainFile = identity?.certificateFile
                configuration.privateKeyFile = identity?.privateKeyFile
            }
            options.transform = TLSClientTransforms(context: context, serverName: "localhost")
            let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next(), options: options)
            // Twice: the second call of an inline method reuses the connection's cached context.
            for _ in 0..<2 {
                #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
            }
            client.close()
        }
        #expect(recorder.seen.withLock { $0 } == [
            TestCertificates.clientSubject, TestCertificates.clientSubject, "", "",
        ])
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }
}
