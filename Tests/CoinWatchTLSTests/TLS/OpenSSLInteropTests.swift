import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

/// The engine against OpenSSL's own command-line client and server over loopback TCP: what the tests check in
/// memory also holds against an independent peer with its own socket handling.
@Suite("TLS against openssl s_server and s_client")
struct OpenSSLInteropTests {
    let pki: TestCertificates

    init() throws {
        pki = try TestCertificates.shared()
    }

    /// `openssl s_server` on a free loopback port, answering each line with the line reversed (`-rev`), for one
    /// connection; stopped when the value goes away.
    final class Server {
        let process: ChildProcess
        let port: Int

        init(identity: TestIdentity, arguments: [String] = []) throws {
            process = try ChildProcess(OpenSSLCommand.path, [
                "s_server", "-accept", "127.0.0.1:0", "-cert", identity.certificateFile, "-key", identity.privateKeyFile,
                "-rev", "-naccept", "1",
            ] + arguments)
            let deadline = ContinuousClock.now + .seconds(60)
            var found: Int?
            while found == nil, ContinuousClock.now < deadline, process.exitStatus == nil {
                found = process.stdout.split(separator: "\n").lazy.compactMap { line in
                    line.hasPrefix("ACCEPT 127.0.0.1:") ? Int(line.dropFirst("ACCEPT 127.0.0.1:".count)) : nil
                }.first
                if found == nil { usleep(10_000) }
            }
            guard let found else {
                throw OpenSSLCommandFailure(message: "s_server did not start: \(process.stdout) \(process.stderr)")
            }
            port = found
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

    @Test("our client talks to s_server: TLS 1.3 and 1.2, ALPN, data both ways", arguments: [false, true])
    func clientAgainstServer(tls12: Bool) throws {
        let server = try Server(identity: pki.server, arguments: ["-alpn", "coinwatch"] + (tls12 ? ["-tls1_2"] : []))
        let session = try pki.clientContext(protocols: ["h2", "coinwatch"]).makeSession(serverName: "localhost")
        let socket = try LoopbackSocket.connect(port: server.port)
        try session.write(Array("hello tls\n".utf8))
        let received = try drive(session, over: socket) { _, plaintext in plaintext.contains(UInt8(ascii: "\n")) }
        #expect(String(decoding: received, as: UTF8.self) == "slt olleh\n")
        #expect(session.protocolVersion == (tls12 ? "TLSv1.2" : "TLSv1.3"))
        #expect(session.applicationProtocol == "coinwatch")
        #expect(session.peerSubject == "CN=localhost")
        session.close()
        try socket.send(session.takeOutput())
    }

    @Test("our client refuses s_server's expired, untrusted and wrong-host certificates")
    func clientRefusals() throws {
        let cases: [(TestIdentity, TLSError.CertificateProblem)] = [
            (pki.expiredServer, .expired), (pki.untrustedServer, .unknownIssuer), (pki.wrongHost, .hostnameMismatch),
        ]
        for (identity, problem) in cases {
            let server = try Server(identity: identity)
            let session = try pki.clientContext().makeSession(serverName: "localhost")
            let socket = try LoopbackSocket.connect(port: server.port)
            let error = try #require(failure { try drive(session, over: socket) { session, _ in session.isHandshakeComplete } })
            #expect(error.code == .certificateVerificationFailed)
            #expect(error.certificateProblem == problem)
        }
    }

    /// Runs `openssl s_client` against a server session of `context` on a free port: the client sends `line`;
    /// the server answers it upper-cased and closes with close_notify.
    ///
    /// - Returns: the server's session and s_client's output.
    func serve(
        _ context: TLSContext, clientArguments: [String], line: String = "hello server\n"
    ) throws -> (session: TLSSession, output: String) {
        let (listener, port) = try LoopbackSocket.listen()
        let client = try ChildProcess(OpenSSLCommand.path, [
            "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-CAfile", pki.caFile,
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
        return (session, client.stdout + client.stderr)
    }

    @Test("s_client talks to our server: verification, ALPN by our preference, the client certificate's subject")
    func serverAgainstClient() throws {
        let context = try pki.serverContext(protocols: ["h2", "coinwatch"]) {
            $0.caFile = pki.caFile
            $0.clientCertificates = .required
        }
        let (session, output) = try serve(context, clientArguments: [
            "-alpn", "coinwatch,h2", "-cert", pki.client.certificateFile, "-key", pki.client.privateKeyFile,
        ])
        #expect(output.contains("HELLO SERVER"))
        #expect(output.contains("Verify return code: 0 (ok)"))
        #expect(output.contains("ALPN protocol: h2"))
        #expect(session.applicationProtocol == "h2")
        #expect(session.peerSubject == TestCertificates.clientSubject)
    }

    @Test("s_client resumes a session our server issued, TLS 1.3 and 1.2, unless resumption is off",
          arguments: [false, true])
    func resumption(tls12: Bool) throws {
        let directory = try TemporaryDirectory(prefix: "tls-resume")
        let sessionFile = directory.appending("session.pem").path
        let version = tls12 ? ["-tls1_2"] : []
        let context = try pki.serverContext()
        let first = try serve(context, clientArguments: ["-sess_out", sessionFile] + version)
        #expect(first.output.contains("New, TLSv1"))
        #expect(!first.session.isResumed)
        let second = try serve(context, clientArguments: ["-sess_in", sessionFile] + version)
        #expect(second.output.contains("Reused, TLSv1"), "\(second.output)")
        #expect(second.session.isResumed)
        #expect(second.output.contains("HELLO SERVER"))

        let off = try pki.serverContext { $0.sessionResumption = false }
        let offFirst = try serve(off, clientArguments: ["-sess_out", sessionFile] + version)
        #expect(!offFirst.session.isResumed)
        let offSecond = try serve(off, clientArguments: ["-sess_in", sessionFile] + version)
        #expect(!offSecond.session.isResumed)
        #expect(offSecond.output.contains("New, TLSv1"))
    }
}
