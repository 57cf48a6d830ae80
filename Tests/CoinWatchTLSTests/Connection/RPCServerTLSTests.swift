import CoinWatchProto
import CoinWatchRPC
import CoinWatchTLS
import CoinWatchTestSupport
import Testing

/// The native protocol over TLS: the RPC server recognises the handshake in the first bytes, and its client
/// puts TLS on its connection.
@Suite("RPC server and client over TLS")
struct RPCServerTLSTests {
    let pki: TestCertificates

    init() async throws {
        pki = try await TestCertificates.shared()
    }

    /// A server on a free loopback port answering Health/Check, with TLS from the test PKI unless `tls` is false.
    func startServer(tls: Bool = true, required: Bool = true, configure: (inout RPCServer.Configuration) -> Void = { _ in })
        throws -> RPCServer
    {
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 1
        // Generous: on a busy machine a handshake may wait long for a core (the stall test sets its own).
        configuration.handshakeTimeout = .seconds(60)
        if tls {
            let context = try ReloadableTLSContext(.server(
                certificateChainFile: pki.server.certificateFile, privateKeyFile: pki.server.privateKeyFile,
                applicationProtocols: ["coinwatch", "h2", "http/1.1"]))
            configuration.tls = TLSServerTransforms(context: context, requiresTransform: required)
        }
        configure(&configuration)
        let server = try RPCServer(
            configuration: configuration,
            methods: [.unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) })])
        _ = try server.start()
        return server
    }

    func tlsOptions(protocols: [String] = ["coinwatch"]) throws -> RPCClientConnection.Options {
        var options = Self.patientOptions
        options.transform = TLSClientTransforms(context: try pki.clientContext(protocols: protocols), serverName: "localhost")
        return options
    }

    /// Client options with a connect timeout a busy machine cannot exhaust.
    static var patientOptions: RPCClientConnection.Options {
        var options = RPCClientConnection.Options()
        options.connectTimeout = .seconds(60)
        return options
    }

    /// The error a connect to `server` with `options` fails with (nil, and an issue, if it succeeds).
    func connectError(_ server: RPCServer, options: RPCClientConnection.Options = patientOptions) async throws -> RPCError? {
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-rpc-cli")
        defer { group.syncShutdownGracefully() }
        return await #expect(throws: RPCError.self) {
            _ = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next(), options: options)
        }
    }

    @Test("a TLS client calls a TLS-only server: handshake, Hello/Welcome and calls, all encrypted")
    func calls() async throws {
        let server = try startServer()
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-rpc-cli")
        let client = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: group.next(), options: tlsOptions())
        for _ in 0..<50 {
            let answer = try await client.unary(V1.Health.check, V1.HealthCheckRequest())
            #expect(answer.status == .serving)
        }
        client.close()
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }

    @Test("a listener that also takes plaintext serves both kinds of client")
    func optionalTLS() async throws {
        let server = try startServer(required: false)
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-rpc-cli")
        let secure = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: group.next(), options: tlsOptions(protocols: []))
        let plain = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: group.next(), options: Self.patientOptions)
        #expect(try await secure.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        #expect(try await plain.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        secure.close()
        plain.close()
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }

    @Test("plaintext to a TLS-only listener is refused with a reason the plaintext client can read")
    func plaintextRefused() async throws {
        let server = try startServer()
        let error = try await connectError(server)
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("TLS connections only") == true)
        await server.shutdownGracefully()
    }

    @Test("TLS to a plaintext listener fails the client cleanly, and the server goes on")
    func tlsToPlaintext() async throws {
        let server = try startServer(tls: false)
        let error = try await connectError(server, options: tlsOptions())
        #expect(error?.code == .unavailable)
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-rpc-cli")
        let plain = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: group.next(), options: Self.patientOptions)
        #expect(try await plain.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        plain.close()
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }

    @Test("a client that cannot verify the server gets UNAVAILABLE with the certificate problem")
    func unverifiedServer() async throws {
        let server = try startServer()
        var options = Self.patientOptions
        options.transform = TLSClientTransforms(context: try TLSContext(.client()), serverName: "localhost")
        let error = try await connectError(server, options: options)
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("unable to get local issuer certificate") == true)
        await server.shutdownGracefully()
    }

    @Test("ALPN h2 or http/1.1 goes where an HTTP request goes; the server answers it and closes")
    func alpnHint() async throws {
        let server = try startServer()
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-rpc-cli")
        for name in ["h2", "http/1.1"] {
            let record = Record()
            try await pki.clientContext(protocols: [name]).connectPatiently(
                host: "127.0.0.1", port: server.port, on: group.next(), serverName: "localhost"
            ) { $0.start(streamDelegate: RecordingDelegate(record)) }
            #expect(await record.wait { $0.closed == 1 })
            #expect(record.value.established == [name], "closed with \(String(describing: record.value.closeError))")
            #expect(String(decoding: record.value.bytes, as: UTF8.self).contains("not HTTP"))
        }
        await group.shutdownGracefully()
        await server.shutdownGracefully()
    }

    @Test("a TLS handshake that stalls is cut off by the server's handshake timeout")
    func stalledHandshake() async throws {
        let server = try startServer { $0.handshakeTimeout = .milliseconds(300) }
        let socket = try RawSocket(port: server.port)
        // A TLS record header, enough for the server to start TLS, and nothing after it.
        socket.send([0x16, 0x03, 0x01, 0x02, 0x00])
        #expect(try await socket.readToEnd().isEmpty)
        await server.shutdownGracefully()
    }
}
