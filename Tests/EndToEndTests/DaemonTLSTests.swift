import CoinWatchClient
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// coinwatchd with `--tls-cert`/`--tls-key`, as an operator runs it: TLS listeners beside plaintext ones, mutual
/// TLS, a certificate reloaded on SIGHUP, and the client library's TLS options (docs/SECURITY.md).
@Suite("coinwatchd over TLS", .serialized, .timeLimit(.minutes(5)))
struct DaemonTLSTests {
    /// A client of `port` with TLS trusting `caFile` only (not the system's CAs), and optionally a client
    /// certificate.
    static func client(
        port: Int, caFile: String?, identity: TestIdentity? = nil, serverName: String? = nil
    ) -> CoinWatchClient {
        var configuration = CoinWatchClient.Configuration.ofDaemon(port: port)
        if let caFile {
            var tls = TLSConfiguration.client(caFile: caFile)
            tls.usesSystemTrustStore = false
            tls.certificateChainFile = identity?.certificateFile
            tls.privateKeyFile = identity?.privateKeyFile
            configuration.tls = tls
            configuration.tlsServerName = serverName ?? "localhost"
        }
        return CoinWatchClient(configuration: configuration)
    }

    /// The error `client`'s first call fails with (nil, and an issue, if it succeeds).
    static func failure(_ client: CoinWatchClient) async -> RPCError? {
        defer { client.close() }
        return await #expect(throws: RPCError.self) { _ = try await client.health() }
    }

    /// Waits (bounded) until the server has logged `text`.
    static func logged(_ text: String, by server: ServerProcess) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if server.log.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return server.log.contains(text)
    }

    /// Every listener's port, once the server has logged them all.
    static func ports(_ count: Int, of server: ServerProcess) async throws -> [Int] {
        let deadline = ContinuousClock.now + .seconds(60)
        while server.ports.count < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let ports = server.ports
        try #require(ports.count == count, "log: \(server.log)")
        return ports
    }

    @Test("with --tls-cert every listener speaks TLS: a trusting client is served, others are refused cleanly")
    func tlsListener() async throws {
        let pki = try await TestCertificates.shared()
        let server = try await ServerProcess.start(arguments: [
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { server.stopInBackground() }
        #expect(server.log.contains("tls=only"), "log: \(server.log)")

        let trusting = Self.client(port: server.port, caFile: pki.caFile)
        #expect(try await trusting.health() == .serving)
        let saved = try await trusting.saveSettings(V1.SaveSettingsRequest(
            deviceID: "phone-1", setRules: ["BTC": V1.AlertRule(below: V1.Decimal(mantissa: 60000, scale: 0))]))
        #expect(saved.deviceID == "phone-1")
        trusting.close()

        let plaintext = await Self.failure(Self.client(port: server.port, caFile: nil))
        #expect(plaintext?.code == .failedPrecondition)
        #expect(plaintext?.message.contains("TLS connections only") == true, "\(String(describing: plaintext))")

        let untrusting = await Self.failure(Self.client(port: server.port, caFile: pki.otherCAFile))
        #expect(untrusting?.code == .unavailable)
        #expect(untrusting?.message.contains("certificate") == true, "\(String(describing: untrusting))")

        let wrongName = await Self.failure(Self.client(port: server.port, caFile: pki.caFile, serverName: "wrong.example"))
        #expect(wrongName?.code == .unavailable)

        // The server went on serving through all of that.
        let again = Self.client(port: server.port, caFile: pki.caFile)
        #expect(try await again.settings(device: "phone-1").rules.count == 1)
        again.close()
    }

    @Test("HTTP over TLS: ALPN h2 and http/1.1 reach the HTTP side; plaintext HTTP on a TLS-only listener is refused")
    func httpOverTLS() async throws {
        let pki = try await TestCertificates.shared()
        let server = try await ServerProcess.start(arguments: [
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { server.stopInBackground() }
        /// curl's status line for GET /healthz, and whether it negotiated `http` (curl offers ALPN by itself).
        func curl(_ options: [String], _ scheme: String = "https") -> (status: Int32?, output: String) {
            guard let child = try? ChildProcess("/usr/bin/curl", [
                "--silent", "--show-error", "--max-time", "30", "--cacert", pki.caFile,
                "--write-out", "%{http_version} %{http_code}", "--output", "/dev/null",
            ] + options + ["\(scheme)://127.0.0.1:\(server.port)/healthz"]) else { return (nil, "") }
            let status = child.wait(timeout: .seconds(60))
            return (status, child.stdout + child.stderr)
        }
        let h2 = curl(["--http2"])
        #expect(h2.status == 0 && h2.output.hasPrefix("2 200"), "\(h2)")
        let http1 = curl(["--http1.1"])
        #expect(http1.status == 0 && http1.output.hasPrefix("1.1 200"), "\(http1)")
        // Without TLS the request must not be served: the listener is TLS only, and says so.
        let plaintext = try ChildProcess("/usr/bin/curl", [
            "--silent", "--show-error", "--max-time", "30", "--http1.1", "--write-out", "\n%{http_code}",
            "http://127.0.0.1:\(server.port)/healthz",
        ])
        await #expect(plaintext.wait(timeout: .seconds(60)) == 0, "\(plaintext.stderr)")
        #expect(plaintext.stdout == "this listener accepts TLS connections only: use https://\n\n400", "\(plaintext.stdout)")
        let prior = curl(["--http2-prior-knowledge"], "http")
        #expect(!prior.output.hasSuffix(" 200"), "\(prior)")
    }

    @Test("--listen twice: a plaintext tcp:// loopback listener beside a TLS one, each refusing the other kind")
    func plaintextBesideTLS() async throws {
        let pki = try await TestCertificates.shared()
        let server = try await ServerProcess.start(arguments: [
            "--listen", "tcp://127.0.0.1:0",
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { server.stopInBackground() }
        let ports = try await Self.ports(2, of: server)
        let secure = Self.client(port: ports[0], caFile: pki.caFile)
        let plain = Self.client(port: ports[1], caFile: nil)
        #expect(try await secure.health() == .serving)
        #expect(try await plain.health() == .serving)
        secure.close()
        plain.close()
        #expect(await Self.failure(Self.client(port: ports[0], caFile: nil))?.code == .failedPrecondition)
        #expect(await Self.failure(Self.client(port: ports[1], caFile: pki.caFile))?.code == .unavailable)
    }

    @Test("--tls-client-ca: only clients with a certificate from that CA are let in")
    func mutualTLS() async throws {
        let pki = try await TestCertificates.shared()
        let server = try await ServerProcess.start(arguments: [
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
            "--tls-client-ca", pki.caFile,
        ])
        defer { server.stopInBackground() }
        let withCertificate = Self.client(port: server.port, caFile: pki.caFile, identity: pki.client)
        #expect(try await withCertificate.health() == .serving)
        withCertificate.close()
        #expect(await Self.failure(Self.client(port: server.port, caFile: pki.caFile)) != nil)
        #expect(await Self.failure(Self.client(port: server.port, caFile: pki.caFile, identity: pki.untrustedClient)) != nil)
    }

    @Test("SIGHUP loads a renewed certificate for new connections without dropping open ones; a bad one is refused")
    func reloadOnHangUp() async throws {
        let pki = try await TestCertificates.shared()
        let files = try TemporaryDirectory(prefix: "tls-reload")
        let certificate = files.appending("live.pem").path
        let key = files.appending("live.key").path
        func install(_ identity: TestIdentity) throws {
            try FileManager.default.removeItem(atPath: certificate)
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: identity.certificateFile, toPath: certificate)
            try FileManager.default.copyItem(atPath: identity.privateKeyFile, toPath: key)
        }
        try FileManager.default.copyItem(atPath: pki.server.certificateFile, toPath: certificate)
        try FileManager.default.copyItem(atPath: pki.server.privateKeyFile, toPath: key)
        let server = try await ServerProcess.start(arguments: ["--tls-cert", certificate, "--tls-key", key])
        defer { server.stopInBackground() }

        // A connection made with the first certificate, kept open across the reloads.
        let group = try EventLoopGroup(threads: 1, namePrefix: "tls-reload-cli")
        var options = RPCClientConnection.Options()
        options.connectTimeout = .seconds(60)
        var trustFirst = TLSConfiguration.client(caFile: pki.caFile, applicationProtocols: ["coinwatch"])
        trustFirst.usesSystemTrustStore = false
        options.transform = TLSClientTransforms(context: try TLSContext(trustFirst), serverName: "localhost")
        let open = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next(), options: options)
        #expect(try await open.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)

        // The renewed certificate comes from the other CA, so which one a new connection sees is plain to tell.
        try install(pki.untrustedServer)
        server.send(SIGHUP)
        #expect(await Self.logged("reloaded the TLS certificate", by: server), "log: \(server.log)")
        let renewed = Self.client(port: server.port, caFile: pki.otherCAFile)
        #expect(try await renewed.health() == .serving)
        renewed.close()
        #expect(await Self.failure(Self.client(port: server.port, caFile: pki.caFile))?.code == .unavailable)
        #expect(open.isUsable)
        #expect(try await open.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)

        // A broken certificate is refused: the server says why and keeps the renewed one.
        try "not a certificate\n".write(toFile: certificate, atomically: true, encoding: .utf8)
        server.send(SIGHUP)
        #expect(await Self.logged("kept the previous TLS certificate", by: server), "log: \(server.log)")
        let stillRenewed = Self.client(port: server.port, caFile: pki.otherCAFile)
        #expect(try await stillRenewed.health() == .serving)
        stillRenewed.close()
        #expect(try await open.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        open.close()
        await group.shutdownGracefully()
    }

    @Test("TLS and credentials together: a TLS listener with --auth required still needs a key for every call")
    func tlsWithAuthorisation() async throws {
        let pki = try await TestCertificates.shared()
        let data = try TemporaryDirectory(prefix: "tls-auth")
        let created = try await onOwnThread {
            try ServerProcess.run(["keys", "create", "--scope", "prices:read", "--data", data.path + "/db"])
        }
        let key = try #require(created.output.split(separator: "\n").first { $0.hasPrefix("cwk_") }.map(String.init))
        let server = try await ServerProcess.start(dataDirectory: data, arguments: [
            "--auth", "required", "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { server.stopInBackground() }
        let anonymous = Self.client(port: server.port, caFile: pki.caFile)
        let refused = await #expect(throws: RPCError.self) { _ = try await anonymous.prices() }
        #expect(refused?.code == .unauthenticated)
        anonymous.close()
        var configuration = Self.client(port: server.port, caFile: pki.caFile).configuration
        configuration.token = key
        let keyed = CoinWatchClient(configuration: configuration)
        _ = try await keyed.prices()
        keyed.close()
        #expect(!server.log.contains(key.dropFirst(21)), "the key's secret never reaches the log")
    }

    @Test("every listener counts for the protected mode: a second, non-loopback one needs --auth")
    func protectedModeSeesEveryListener() async throws {
        let data = try TemporaryDirectory()
        let refused = try await onOwnThread {
            try ServerProcess.run([
                "--listen", "tcp://127.0.0.1:0", "--listen", "0.0.0.0:0", "--feed", "none", "--data", data.path + "/db",
            ])
        }
        #expect(refused.status == 1, "output: \(refused.output)")
        #expect(refused.output.contains("refusing to start: listening on 0.0.0.0 without --auth"), "output: \(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: data.path + "/db"))
    }

    @Test("TLS flags that cannot work are usage errors; an unreadable certificate stops the start with the reason",
          arguments: [
              (["--tls-cert", "/nonexistent.pem"], "error: --tls-cert and --tls-key go together"),
              (["--listen", "tls://127.0.0.1:0"], "error: --listen 127.0.0.1:0 asks for TLS (tls://)"),
              (["--tls-client-ca", "/ca.pem"], "error: --tls-client-ca needs --tls-cert and --tls-key"),
              (["--tls-cert", "/c.pem", "--tls-key", "/k.pem", "--tls-min-version", "1.1"],
               "error: --tls-min-version: '1.1' is not 1.2 or 1.3"),
          ])
    func badTLSFlags(_ arguments: [String], _ message: String) async throws {
        let data = try TemporaryDirectory()
        let result = try await ServerProcess.run(arguments + ["--data", data.path + "/store"])
        #expect(result.status == 64, "output: \(result.output)")
        #expect(result.output.hasPrefix(message), "output: \(result.output)")
    }

    @Test("a certificate file that cannot be read stops coinwatchd before it opens the store, naming the file")
    func unreadableCertificate() async throws {
        let data = try TemporaryDirectory()
        let result = try await onOwnThread {
            try ServerProcess.run([
                "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem",
                "--data", data.path + "/store",
            ])
        }
        #expect(result.status == 1, "output: \(result.output)")
        #expect(result.output.contains("cannot use the TLS certificate and key"), "output: \(result.output)")
        #expect(result.output.contains("/nonexistent/cert.pem"), "output: \(result.output)")
        #expect(!FileManager.default.fileExists(atPath: data.path + "/store"))
    }
}
