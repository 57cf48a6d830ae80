import CoinWatchTestSupport
import Foundation
import Testing

/// The CLI's TLS options against a real coinwatchd serving TLS from the test PKI.
@Suite("Commands over TLS", .serialized, .timeLimit(.minutes(3)))
struct TLSCommandTests {
    @Test("--ca-file trusts the server's CA; without it, or with the wrong name, the command fails saying why")
    func caFileAndServerName() async throws {
        let pki = try await TestCertificates.shared()
        let server = try await ServerProcess.start(arguments: [
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { server.stopInBackground() }
        // The server certificate names 127.0.0.1 as well as localhost, so the address itself verifies.
        var result = try await CLIProcess.run(["health", "--ca-file", pki.caFile, "--timeout", "60s"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("SERVING"), "\(result.stdout)")

        result = try await CLIProcess.run(["health", "--timeout", "60s"], server: server.address)
        #expect(result.status != 0)
        #expect(result.stderr.contains("TLS"), "\(result.stderr)")

        result = try await CLIProcess.run(["health", "--tls", "--timeout", "60s"], server: server.address)
        #expect(result.status != 0, "the test CA is not among the system's")
        #expect(result.stderr.contains("certificate"), "\(result.stderr)")

        result = try await CLIProcess.run(
            ["health", "--ca-file", pki.caFile, "--server-name", "wrong.example", "--timeout", "60s"], server: server.address)
        #expect(result.status != 0)

        result = try await CLIProcess.run(
            ["health", "--ca-file", pki.caFile, "--client-cert", pki.client.certificateFile], server: server.address)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--client-cert and --client-key go together"), "\(result.stderr)")
    }
}
