import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

/// The engine against OpenSSL's own command-line client and server over loopback TCP: what the tests check in
/// memory also holds against an independent peer with its own socket handling.
@Suite("TLS against openssl s_server and s_client")
struct OpenSSLInteropTests {
    let pki: TestCertificates

    init() async throws {
        pki = try await TestCertificates.shared()
    }

    /// `openssl s_server` on a free loopback port, answering each line with the line reversed (`-rev`), for one
    /// connection; stopped when the value goes away.
    final class Server: Sendable {
        let process: ChildProcess
        let port: Int

        private init(process: ChildProcess, port: Int) {
            self.process = process
            self.port = port
        }

        /// Starts it and waits (polling, bounded) for the port it printed.
        static func start(identity: TestIdentity, arguments: [String] = []) async throws -> Server {
            let process = try ChildProcess(OpenSSLCommand.path, [
                "s_server", "-accept", "127.0.0.1:0", "-cert", identity.certificateFile, "-key", identity.privateKeyFile,
                "-rev", "-naccept", "1",
            ] + arguments)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, process.exitStatus == nil {
                let port = process.stdout.split(separator: "\n").lazy.compactMap { line in
                    line.hasPrefix("ACCEPT 127.0.0.1:") ? Int(line.dropFirst("ACCEPT 127.0.0.1:".count)) : nil
                }.first
                if let port { return Server(process: process, port: port) }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw OpenSSLCommandFailure(message: "s_server did not start: \(process.stdout) \(process.stderr)")
        }

        deinit {
            process.signal(SIGTERM)
            _ = process.wait(timeout: .seconds(10))
        }
    }

    struct OpenSSLCommandFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// What a client session made of a run against s_server.
    struct ClientOutcome: Sendable {
        var received: [UInt8] = []
        var version: String?
        var applicationProtocol: String?
        var peerSubject: String?
        var error: TLSError?
    }

    /// Runs a client session against `server`: writes `line`, collects the answer up to its newline. Blocking,
    /// so it runs on a thread of its own.
    func runClient(against server: Server, protocols: [String] = [], line: String) async throws -> ClientOutcome {
        let context = try pki.clientContext(protocols: protocols)
        let port = server.port
        return try await onOwnThread {
            let session = try context.makeSession(serverName: "localhost")
            let socket = try LoopbackSocket.connect(port: port)
            var outcome = ClientOutcome()
            do {
                try session.write(Array(line.utf8))
                outcome.received = try drive(session, over: socket) { _, plaintext in
                    plaintext.contains(UInt8(ascii: "\n"))
                }
                session.close()
                try socket.send(session.takeOutput())
            } catch let error as TLSError {
                outcome.error = error
            }
            outcome.version = session.protocolVersion
            outcome.applicationProtocol = session.applicationProtocol
            outcome.peerSubject = session.peerSubject
            return outcome
        }
    }

    @Test("our client talks to s_server: TLS 1.3 and 1.2, ALPN, data both ways", arguments: [false, true])
    func clientAgainstServer(tls12: Bool) async throws {
        let server = try await Server.start(
            identity: pki.server, arguments: ["-alpn", "coinwatch"] + (tls12 ? ["-tls1_2"] : []))
        let outcome = try await runClient(against: server, protocols: ["h2", "coinwatch"], line: "hello tls\n")
        #expect(outcome.error == nil)
        #expect(String(decoding: outcome.received, as: UTF8.self) == "slt olleh\n")
        #expect(outcome.version == (tls12 ? "TLSv1.2" : "TLSv1.3"))
        #expect(outcome.applicationProtocol == "coinwatch")
        #expect(outcome.peerSubject == "CN=localhost")
    }

    @Test("our client refuses s_server's expired, untrusted and wrong-host certificates")
    func clientRefusals() async throws {
        let cases: [(TestIdentity, TLSError.CertificateProblem)] = [
            (pki.expiredServer, .expired), (pki.untrustedServer, .unknownIssuer), (pki.wrongHost, .hostnameMismatch),
        ]
        for (identity, problem) in cases {
            let server = try await Server.start(identity: identity)
            let outcome = try await runClient(against: server, line: "x\n")
            #expect(outcome.error?.code == .certificateVerificationFailed)
            #expect(outcome.error?.certificateProblem == problem)
            #expect(outcome.received.isEmpty)
        }
    }

    /// What our server session made of a run with s_client.
    struct ServerOutcome: Sendable {
        var applicationProtocol: String?
        var peerSubject: String?
        var isResumed = false
        /// s_client's stdout and stderr.
        var output = ""
    }

    /// Runs `openssl s_client` against a server session of `context` on a free port: the client sends `line`;
    /// the server answers it upper-cased and closes with close_notify. Blocking, on a thread of its own.
    func serve(_ context: TLSContext, clientArguments: [String], line: String = "hello server\n") async throws
        -> ServerOutcome
    {
        let caFile = pki.caFile
        return try await onOwnThread {
            let (listener, port) = try LoopbackSocket.listen()
            let client = try ChildProcess(OpenSSLCommand.path, [
                "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-CAfile", caFile,
                "-verify_return_error", "-verify_hostname", "localhost", "-ign_eof",
            ] + clientArguments)
            client.write(Array(line.utf8))
            let socket = try listener.accept()
            let session = try context.makeSession()
            var answered = false
            try drive(session, over: socket) { session, plaintext in
                if !answered, plaintext.contains(UInt8(ascii: "\n")) {
                    try session.write(Array(String(decoding: plaintext, as: UTF8.self).uppercased().utf8))
                    session.close()
                    answered = true
                }
                return answered && session.pendingOutputCount == 0
            }
            guard client.wait(timeout: .seconds(60)) != nil else {
                throw OpenSSLCommandFailure(message: "s_client did not finish: \(client.stdout) \(client.stderr)")
            }
            return ServerOutcome(
                applicationProtocol: session.applicationProtocol, peerSubject: session.peerSubject,
                isResumed: session.isResumed, output: client.stdout + client.stderr)
        }
    }

    @Test("s_client talks to our server: verification, ALPN by our preference, the client certificate's subject")
    func serverAgainstClient() async throws {
        let context = try pki.serverContext(protocols: ["h2", "coinwatch"]) {
            $0.caFile = pki.caFile
            $0.clientCertificates = .required
        }
        let outcome = try await serve(context, clientArguments: [
            "-alpn", "coinwatch,h2", "-cert", pki.client.certificateFile, "-key", pki.client.privateKeyFile,
        ])
        #expect(outcome.output.contains("HELLO SERVER"))
        #expect(outcome.output.contains("Verify return code: 0 (ok)"))
        #expect(outcome.output.contains("ALPN protocol: h2"))
        #expect(outcome.applicationProtocol == "h2")
        #expect(outcome.peerSubject == TestCertificates.clientSubject)
    }

    @Test("s_client resumes a session our server issued, TLS 1.3 and 1.2, unless resumption is off",
          arguments: [false, true])
    func resumption(tls12: Bool) async throws {
        let directory = try TemporaryDirectory(prefix: "tls-resume")
        let sessionFile = directory.appending("session.pem").path
        let version = tls12 ? ["-tls1_2"] : []
        let context = try pki.serverContext()
        let first = try await serve(context, clientArguments: ["-sess_out", sessionFile] + version)
        #expect(first.output.contains("New, TLSv1"))
        #expect(!first.isResumed)
        let second = try await serve(context, clientArguments: ["-sess_in", sessionFile] + version)
        #expect(second.output.contains("Reused, TLSv1"), "\(second.output)")
        #expect(second.isResumed)
        #expect(second.output.contains("HELLO SERVER"))

        let off = try pki.serverContext { $0.sessionResumption = false }
        let offFirst = try await serve(off, clientArguments: ["-sess_out", sessionFile] + version)
        #expect(!offFirst.isResumed)
        let offSecond = try await serve(off, clientArguments: ["-sess_in", sessionFile] + version)
        #expect(!offSecond.isResumed)
        #expect(offSecond.output.contains("New, TLSv1"))
    }
}
