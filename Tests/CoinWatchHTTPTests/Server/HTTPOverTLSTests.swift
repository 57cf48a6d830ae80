import CoinWatchMetrics
import CoinWatchProto
import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing
@testable import CoinWatchHTTP
@testable import CoinWatchRPC

/// Keeps the peer identity of every call it is asked about, and allows them all.
final class HTTPIdentityRecorder: CallAuthorizer {
    let seen = Mutex<[String: [String]]>([:])

    func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
        seen.withLock { $0[request.context.transport, default: []].append(request.context.peerIdentity) }
    }
}

/// HTTP on a TLS listener, driven by curl: the protocol ALPN chose reaches the HTTP side, and a client
/// certificate's subject reaches the authoriser of gRPC and Connect calls as it does native ones.
@Suite(.timeLimit(.minutes(2)))
struct HTTPOverTLSTests {
    @Test("gRPC and Connect over TLS, with a client certificate: the authoriser sees its subject")
    func clientCertificateReachesHTTPCalls() async throws {
        let pki = try await TestCertificates.shared()
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 1
        configuration.handshakeTimeout = .seconds(60)
        var tls = TLSConfiguration.server(
            certificateChainFile: pki.server.certificateFile, privateKeyFile: pki.server.privateKeyFile,
            applicationProtocols: ["h2", "http/1.1", RPCProtocol.applicationProtocol])
        tls.caFile = pki.caFile
        tls.clientCertificates = .optional
        configuration.tls = TLSServerTransforms(context: try ReloadableTLSContext(tls))
        let recorder = HTTPIdentityRecorder()
        let server = try RPCServer(
            configuration: configuration,
            methods: [.unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) })],
            authorizer: recorder)
        let http = HTTPServer(rpc: server, configuration: HTTPServer.Configuration(metrics: MetricsRegistry(), isServing: { true }))
        try server.start()
        defer { withExtendedLifetime(http) {} }
        let url = "https://127.0.0.1:\(server.port)/coinwatch.v1.Health/Check"
        let certificate = ["--cert", pki.client.certificateFile, "--key", pki.client.privateKeyFile]
        let connectJSON = ["-H", "content-type: application/json", "--data-binary", "{}"]
        // A gRPC request: one uncompressed, empty message behind its 5-byte prefix.
        let grpcFrame = try TemporaryDirectory(prefix: "grpc-frame")
        let framePath = grpcFrame.path + "/frame"
        try Data([0, 0, 0, 0, 0]).write(to: URL(fileURLWithPath: framePath))
        let grpc = ["--http2", "-H", "content-type: application/grpc", "-H", "te: trailers",
                    "--data-binary", "@" + framePath]
        for (name, options) in [("connect h2", ["--http2"] + connectJSON), ("connect http/1.1", ["--http1.1"] + connectJSON),
                                ("grpc", grpc)] {
            let child = try ChildProcess("/usr/bin/curl", [
                "--silent", "--show-error", "--max-time", "30", "--cacert", pki.caFile, "--output", "/dev/null",
                "--write-out", "%{http_code}",
            ] + certificate + options + [url])
            let status = await child.wait(timeout: .seconds(60))
            #expect(status == 0 && child.stdout == "200", "\(name): \(child.stdout) \(child.stderr)")
        }
        let seen = recorder.seen.withLock { $0 }
        #expect(seen.values.joined().count == 3, "\(seen)")
        #expect(seen.values.joined().allSatisfy { $0 == TestCertificates.clientSubject }, "\(seen)")
        await server.shutdownGracefully()
    }
}
