@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation
import Testing

/// The connection's credentials and TLS against a nats-server that demands them: what `--cluster-user`,
/// `--cluster-password`, `--cluster-token`, `--cluster-ca` and `--cluster-cert`/`--cluster-key` turn into.
/// nats.c checks a server certificate's name against the host of the URL it connects to.
@Suite(.enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap)"), .serialized)
struct NATSConnectionSecurityTests {
    /// Whether a connection made with `configure` applied is accepted: a PING/PONG round trip proves the server
    /// let it in (a refused client may be told so only after the connect call returns). The error otherwise.
    static func attempt(
        _ url: String, _ configure: @escaping @Sendable (inout NATSConnection.Options) -> Void
    ) async throws -> ClusterError? {
        try await onOwnThread { () -> ClusterError? in
            var options = NATSConnection.Options(servers: [url])
            options.connectTimeoutMs = 10_000
            configure(&options)
            do throws(ClusterError) {
                let connection = try NATSConnection(options: options, onEvent: { _ in })
                try connection.flush(timeoutMs: 10_000)
                connection.close()
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func aUserAndPasswordAreRequiredAndTheSecretIsNeverInTheError() async throws {
        let nats = try await NATSCluster.start(servers: 1, arguments: ["--user", "node", "--pass", "pw-Correct-1"])
        let url = nats.urls
        #expect(try await Self.attempt(url) { $0.user = "node"; $0.password = "pw-Correct-1" } == nil)
        let wrong = try await Self.attempt(url) { $0.user = "node"; $0.password = "pw-Wrong-2" }
        let missing = try await Self.attempt(url) { _ in }
        for error in [wrong, missing] {
            let error = try #require(error)
            #expect(error.message.contains("cannot connect to \(url)"), "\(error.message)")
            #expect(error.message.contains("Authorization Violation"), "\(error.message)")
            #expect(!error.message.contains("pw-"), "\(error.message)")
        }
    }

    @Test func aPasswordInTheURLIsNeverShownOrInTheError() async throws {
        let nats = try await NATSCluster.start(servers: 1, arguments: ["--user", "node", "--pass", "pw-Correct-1"])
        let url = nats.urls
        let port = String(url.split(separator: ":").last!)
        let withCredentials = url.replacingOccurrences(of: "nats://", with: "nats://node:pw-Correct-1@")
        let connection = try await onOwnThread {
            try NATSConnection(options: .init(servers: [withCredentials]), onEvent: { _ in })
        }
        // What is logged at the join and shown by Health as the connected server.
        #expect(connection.connectedURL.hasSuffix(":" + port), "\(connection.connectedURL)")
        #expect(!connection.connectedURL.contains("pw-") && !connection.connectedURL.contains("node@"), "\(connection.connectedURL)")
        connection.close()
        let wrong = try #require(try await Self.attempt(url.replacingOccurrences(of: "nats://", with: "nats://node:pw-Wrong-2@")) { _ in })
        #expect(!wrong.message.contains("pw-"), "\(wrong.message)")
        #expect(NATSConnection.redacted("tls://a:b@host:4222") == "tls://host:4222")
        #expect(NATSConnection.redacted("nats://token@host:4222/x@y") == "nats://host:4222/x@y")
        #expect(NATSConnection.redacted("nats://host:4222") == "nats://host:4222")
    }

    @Test func aTokenIsRequiredAndNeverInTheError() async throws {
        let nats = try await NATSCluster.start(servers: 1, arguments: ["--auth", "tok-Correct-1"])
        let url = nats.urls
        #expect(try await Self.attempt(url) { $0.token = "tok-Correct-1" } == nil)
        let wrong = try #require(try await Self.attempt(url) { $0.token = "tok-Wrong-2" })
        #expect(!wrong.message.contains("tok-"), "\(wrong.message)")
        #expect(wrong.message.contains("Authorization Violation"), "\(wrong.message)")
    }

    /// TLS with the test CA: trusted and named right is accepted; another CA, no CA, or a certificate for
    /// another host is refused.
    @Test func tlsVerifiesTheServersChainAndName() async throws {
        let pki = try await TestCertificates.shared()
        func server(_ identity: TestIdentity) async throws -> NATSCluster {
            try await NATSCluster.start(servers: 1, arguments: [
                "--tls", "--tlscert", identity.certificateFile, "--tlskey", identity.privateKeyFile,
            ])
        }
        let good = try await server(pki.server)
        let port = try #require(good.urls.split(separator: ":").last)
        for host in ["localhost", "127.0.0.1"] {
            let url = "tls://\(host):\(port)"
            #expect(try await Self.attempt(url) { $0.caFile = pki.caFile } == nil, "\(url)")
        }
        let url = "tls://localhost:\(port)"
        let otherCA = try #require(try await Self.attempt(url) { $0.caFile = pki.otherCAFile })
        #expect(otherCA.message.contains("unable to get local issuer certificate"), "\(otherCA.message)")
        let noCA = try await Self.attempt(url) { _ in }
        #expect(noCA?.message.contains("unable to get local issuer certificate") == true, "\(noCA?.message ?? "accepted")")
        // The server asks for TLS; a client given no TLS option still verifies what it gets.
        let plain = try await Self.attempt("nats://localhost:\(port)") { _ in }
        #expect(plain?.message.contains("unable to get local issuer certificate") == true, "\(plain?.message ?? "accepted")")

        let wrongHost = try await server(pki.wrongHost)
        let wrongPort = try #require(wrongHost.urls.split(separator: ":").last)
        let misnamed = try await Self.attempt("tls://localhost:\(wrongPort)") {
            $0.caFile = pki.caFile
        }
        #expect(misnamed?.message.contains("hostname mismatch") == true, "\(misnamed?.message ?? "accepted")")

        let expired = try await server(pki.expiredServer)
        let expiredPort = try #require(expired.urls.split(separator: ":").last)
        let expiredError = try await Self.attempt("tls://localhost:\(expiredPort)") { $0.caFile = pki.caFile }
        #expect(expiredError?.message.contains("certificate has expired") == true, "\(expiredError?.message ?? "accepted")")
    }

    /// A server that verifies clients (`--tlsverify`) takes the node's certificate from the CA it trusts, and
    /// no other.
    @Test func mutualTLSPresentsTheClientCertificate() async throws {
        let pki = try await TestCertificates.shared()
        let nats = try await NATSCluster.start(servers: 1, arguments: [
            "--tlsverify", "--tlscert", pki.server.certificateFile, "--tlskey", pki.server.privateKeyFile,
            "--tlscacert", pki.caFile,
        ])
        let port = try #require(nats.urls.split(separator: ":").last)
        let url = "tls://localhost:\(port)"
        let trusted = try await Self.attempt(url) {
            $0.caFile = pki.caFile
            $0.certificateFile = pki.client.certificateFile
            $0.keyFile = pki.client.privateKeyFile
        }
        #expect(trusted == nil, "\(trusted?.message ?? "")")
        let noCertificate = try await Self.attempt(url) { $0.caFile = pki.caFile }
        // The server drops the handshake; the library then reports the broken connection, not a time-out.
        #expect(Self.refusedByTheServer(noCertificate), "\(noCertificate?.message ?? "accepted")")
        let untrusted = try await Self.attempt(url) {
            $0.caFile = pki.caFile
            $0.certificateFile = pki.untrustedClient.certificateFile
            $0.keyFile = pki.untrustedClient.privateKeyFile
        }
        #expect(Self.refusedByTheServer(untrusted), "\(untrusted?.message ?? "accepted")")
    }

    /// Operator mode (decentralised authentication): the node's credentials file, a user JWT and its NKey seed,
    /// signs in and JetStream works for its account; the same user signed by an account the server does not know,
    /// or no credentials at all, is refused.
    @Test func aCredentialsFileSignsInToAnOperatorModeServer() async throws {
        let accounts = try await onOwnThread { try NATSOperatorMode() }
        let nats = try await NATSCluster.start(servers: 1, arguments: ["-c", accounts.serverConfiguration])
        let url = nats.urls
        let credentials = accounts.credentialsFile
        let stored = try await onOwnThread { () throws -> KVEntry? in
            var options = NATSConnection.Options(servers: [url])
            options.credentialsFile = credentials
            let connection = try NATSConnection(options: options, onEvent: { _ in })
            let bucket = try JetStream(connection: connection).keyValue(.init(name: "t-creds"))
            _ = try bucket.put("phone-1", [7])
            return try bucket.get("phone-1")
        }
        #expect(stored?.value == [7])
        let stranger = try #require(try await Self.attempt(url) { $0.credentialsFile = accounts.strangerCredentialsFile })
        #expect(stranger.message.contains("Authorization Violation"), "\(stranger.message)")
        let anonymous = try await Self.attempt(url) { _ in }
        #expect(anonymous?.message.contains("Authorization Violation") == true, "\(anonymous?.message ?? "accepted")")
    }

    /// A refusal that came from the server ending the connection, not from waiting out a time-out.
    static func refusedByTheServer(_ error: ClusterError?) -> Bool {
        guard let error else { return false }
        return error.message.contains("cannot connect") && !error.message.contains("imeout")
    }

    /// Each file is named, before any server is tried: the credentials file by this wrapper (nats.c would read it
    /// only when connecting, and then say only that no server was available), the TLS files by nats.c.
    @Test func unreadableCredentialFilesNameTheFile() async throws {
        let missing = "/nonexistent/coinwatch-\(UUID().uuidString)"
        let cases: [(ClusterError.Code, String, @Sendable (inout NATSConnection.Options) -> Void)] = [
            (.invalidArgument, "cannot read the NATS credentials file \(missing): No such file or directory",
             { $0.credentialsFile = missing }),
            (.failed, "reading the CA file \(missing)", { $0.caFile = missing }),
            (.failed, "reading \(missing) and \(missing).key", { $0.certificateFile = missing; $0.keyFile = missing + ".key" }),
        ]
        for (code, text, configure) in cases {
            let error = try #require(try await Self.attempt("nats://127.0.0.1:1", configure))
            #expect(error.code == code, "\(error.message)")
            #expect(error.message.hasPrefix(text), "\(error.message)")
        }
    }
}
