import CoinWatchTLS
import CoinWatchTestSupport
import Testing

@Suite("TLS sessions in memory")
struct TLSSessionTests {
    let pki: TestCertificates

    init() async throws {
        pki = try await TestCertificates.shared()
    }

    @Test("a client and a server handshake, negotiate TLS 1.3 and carry bytes both ways")
    func handshakeAndData() throws {
        let pair = try MemoryPair(client: pki.clientContext(), server: pki.serverContext())
        try pair.handshake()
        #expect(pair.client.protocolVersion == "TLSv1.3")
        #expect(pair.server.protocolVersion == "TLSv1.3")
        #expect(pair.client.state == .established)
        #expect(!pair.client.isResumed)
        #expect(pair.client.peerSubject == "CN=localhost")
        #expect(pair.server.peerSubject == nil)

        try pair.client.write(Array("ping".utf8))
        try pair.server.write(Array("pong".utf8))
        pair.run()
        let received = pair.takeReceived()
        #expect(received.server == Array("ping".utf8))
        #expect(received.client == Array("pong".utf8))

        // A megabyte each way, in pieces that are not record-sized.
        let large = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) }
        var offset = 0
        while offset < large.count {
            let end = min(large.count, offset + 40_000)
            try pair.client.write(Array(large[offset..<end]))
            try pair.server.write(Array(large[offset..<end]))
            pair.run()
            offset = end
        }
        let bulk = pair.takeReceived()
        #expect(bulk.server == large)
        #expect(bulk.client == large)
        #expect(pair.clientError == nil && pair.serverError == nil)
    }

    @Test("a client connecting by IP address checks the certificate's IP names")
    func ipAddress() throws {
        let pair = try MemoryPair(client: pki.clientContext(), server: pki.serverContext(), serverName: "127.0.0.1")
        try pair.handshake()
        let ipv6 = try MemoryPair(client: pki.clientContext(), server: pki.serverContext(), serverName: "::1")
        try ipv6.handshake()
        let wrong = try MemoryPair(client: pki.clientContext(), server: pki.serverContext(\.wrongHost), serverName: "127.0.0.1")
        wrong.run()
        #expect(wrong.clientError?.certificateProblem == .ipAddressMismatch)
    }

    @Test("ALPN: the server's preference among what the client offers; no common name is no ALPN, not a failure")
    func alpn() throws {
        let server = try pki.serverContext(protocols: ["h2", "http/1.1", "coinwatch"])
        let preferred = try MemoryPair(client: pki.clientContext(protocols: ["coinwatch", "h2"]), server: server)
        try preferred.handshake()
        #expect(preferred.client.applicationProtocol == "h2")
        #expect(preferred.server.applicationProtocol == "h2")

        let native = try MemoryPair(client: pki.clientContext(protocols: ["coinwatch"]), server: server)
        try native.handshake()
        #expect(native.server.applicationProtocol == "coinwatch")

        let none = try MemoryPair(client: pki.clientContext(protocols: ["spdy/3"]), server: server)
        try none.handshake()
        #expect(none.server.applicationProtocol == nil)
        #expect(none.client.applicationProtocol == nil)

        let silent = try MemoryPair(client: pki.clientContext(), server: server)
        try silent.handshake()
        #expect(silent.server.applicationProtocol == nil)

        #expect(failure { _ = try pki.clientContext(protocols: [""]) }?.code == .invalidArgument)
        #expect(failure { _ = try pki.serverContext(protocols: [String(repeating: "x", count: 256)]) }?.code == .invalidArgument)
    }

    @Test("the client refuses a server certificate from another CA, expired, or for another host, saying why")
    func verificationFailures() throws {
        let cases: [(KeyPath<TestCertificates, TestIdentity>, TLSError.CertificateProblem)] = [
            (\.untrustedServer, .unknownIssuer), (\.expiredServer, .expired), (\.wrongHost, .hostnameMismatch),
        ]
        for (identity, problem) in cases {
            let pair = try MemoryPair(client: pki.clientContext(), server: pki.serverContext(identity))
            pair.run()
            let error = try #require(pair.clientError, "\(identity)")
            #expect(error.code == .certificateVerificationFailed)
            #expect(error.certificateProblem == problem)
            #expect(error.message.contains(problem.description))
            #expect(pair.client.state == .failed)
            // The client told the server with an alert.
            #expect(pair.serverError?.code == .handshakeFailed)
            #expect(pair.serverError?.openSSLErrors.joined().contains("alert") == true)
        }
        // Without a name to check, a verifying client refuses to start at all.
        #expect(failure { _ = try pki.clientContext().makeSession() }?.code == .invalidArgument)
        // With verification off (tests only), the same certificates are accepted.
        let trusting = try pki.clientContext { $0.verifiesPeer = false }
        let pair = try MemoryPair(client: trusting, server: pki.serverContext(\.untrustedServer), serverName: nil)
        try pair.handshake()
    }

    @Test("the system trust store does not vouch for the test CA's certificates")
    func systemTrustOnly() throws {
        let system = try TLSContext(.client())
        let pair = try MemoryPair(client: system, server: pki.serverContext())
        pair.run()
        #expect(pair.clientError?.certificateProblem == .unknownIssuer)
    }

    @Test("mutual TLS: the verified client's subject is visible; a missing or untrusted client certificate is refused")
    func mutualTLS() throws {
        let required = try pki.serverContext {
            $0.caFile = pki.caFile
            $0.clientCertificates = .required
        }
        let withCertificate = try pki.clientContext {
            $0.certificateChainFile = pki.client.certificateFile
            $0.privateKeyFile = pki.client.privateKeyFile
        }
        let pair = try MemoryPair(client: withCertificate, server: required)
        try pair.handshake()
        #expect(pair.server.peerSubject == TestCertificates.clientSubject)
        try pair.client.write(Array("hi".utf8))
        pair.run()
        #expect(pair.takeReceived().server == Array("hi".utf8))

        // No certificate: the server refuses; in TLS 1.3 the client learns it from the alert after its side of
        // the handshake finished.
        let anonymous = try MemoryPair(client: pki.clientContext(), server: required)
        anonymous.run()
        #expect(anonymous.serverError?.code == .handshakeFailed)
        #expect(anonymous.clientError?.code == .handshakeFailed)

        let stranger = try pki.clientContext {
            $0.certificateChainFile = pki.untrustedClient.certificateFile
            $0.privateKeyFile = pki.untrustedClient.privateKeyFile
        }
        let refused = try MemoryPair(client: stranger, server: required)
        refused.run()
        #expect(refused.serverError?.code == .certificateVerificationFailed)
        #expect(refused.serverError?.certificateProblem == .unknownIssuer)

        let optional = try pki.serverContext {
            $0.caFile = pki.caFile
            $0.clientCertificates = .optional
        }
        let guest = try MemoryPair(client: pki.clientContext(), server: optional)
        try guest.handshake()
        #expect(guest.server.peerSubject == nil)
        let member = try MemoryPair(client: withCertificate, server: optional)
        try member.handshake()
        #expect(member.server.peerSubject == TestCertificates.clientSubject)
    }

    @Test("bytes that are not TLS fail the server's session as a protocol error, with an alert to send")
    func garbage() throws {
        let server = try pki.serverContext()
        let http = try server.makeSession()
        try http.feed(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(failure { try http.advanceHandshake() }?.code == .protocolError)
        #expect(http.state == .failed)
        // Every later call reports the same failure.
        #expect(failure { try http.feed([1]) }?.code == .protocolError)

        // A valid ClientHello, then garbage where the client's next flight belongs.
        let client = try pki.clientContext().makeSession(serverName: "localhost")
        try client.advanceHandshake()
        let session = try server.makeSession()
        try session.feed(client.takeOutput())
        #expect(try !session.advanceHandshake())
        #expect(session.pendingOutputCount > 0)  // ServerHello and the rest of its flight
        _ = session.takeOutput()
        try session.feed([UInt8](repeating: 0xA5, count: 64))
        let error = try #require(failure { try session.advanceHandshake() })
        #expect(error.code == .protocolError)
        #expect(!error.openSSLErrors.isEmpty)
        #expect(session.pendingOutputCount > 0)  // the alert

        // Garbage after the handshake, in a record that does not decrypt.
        let pair = try MemoryPair(client: pki.clientContext(), server: server)
        try pair.handshake()
        try pair.server.feed([0x17, 0x03, 0x03, 0x00, 0x20] + [UInt8](repeating: 0x42, count: 32))
        #expect(failure { _ = try pair.server.readAvailable() }?.code == .protocolError)
    }

    @Test("close_notify: the peer sees a clean close and answers; writing afterwards is refused")
    func closing() throws {
        let pair = try MemoryPair(client: pki.clientContext(), server: pki.serverContext())
        try pair.handshake()
        try pair.client.write(Array("last words".utf8))
        pair.client.close()
        pair.run()
        #expect(pair.takeReceived().server == Array("last words".utf8))
        #expect(pair.serverSawClose)
        #expect(pair.clientSawClose)
        #expect(pair.server.state == .closed)
        #expect(try pair.server.inputEnded())
        #expect(failure { try pair.server.write([1]) }?.code == .peerClosed)
        #expect(failure { try pair.client.write([1]) }?.code == .peerClosed)
    }

    @Test("a session closed during its handshake never counts as having completed one")
    func closedDuringHandshake() throws {
        let client = try pki.clientContext().makeSession(serverName: "localhost")
        try client.advanceHandshake()
        client.close()
        #expect(client.state == .closed)
        #expect(!client.isHandshakeComplete)
        #expect(try !client.advanceHandshake())
        #expect(try client.readAvailable().isEmpty)
        #expect(client.protocolVersion == nil)
        #expect(failure { try client.write([1]) }?.code == .peerClosed)
    }

    @Test("end of input during the handshake is a peer close; after it, a close without close_notify")
    func inputEnded() throws {
        let session = try pki.serverContext().makeSession()
        #expect(failure { try session.inputEnded() }?.code == .peerClosed)
        let pair = try MemoryPair(client: pki.clientContext(), server: pki.serverContext())
        try pair.handshake()
        #expect(try !pair.server.inputEnded())
    }

    @Test("plaintext written during the handshake is held, bounded, and sent once it completes")
    func earlyWrites() throws {
        let limits = TLSSession.Limits(maximumBufferedCiphertext: 64 * 1024, maximumBufferedPlaintext: 1_000)
        let client = try pki.clientContext().makeSession(serverName: "localhost", limits: limits)
        try client.write(Array(repeating: 1, count: 600))
        let pair = MemoryPair(client: client, server: try pki.serverContext().makeSession())
        try pair.handshake()
        pair.run()
        #expect(pair.takeReceived().server == Array(repeating: 1, count: 600))

        let eager = try pki.clientContext().makeSession(serverName: "localhost", limits: limits)
        try eager.write(Array(repeating: 1, count: 600))
        #expect(failure { try eager.write(Array(repeating: 2, count: 600)) }?.code == .bufferLimitExceeded)
    }

    @Test("ciphertext fed faster than it is read, or produced faster than it is drained, hits the bound")
    func ciphertextBounds() throws {
        let limits = TLSSession.Limits(maximumBufferedCiphertext: 20_000, maximumBufferedPlaintext: 1_000)
        let session = try pki.serverContext().makeSession(limits: limits)
        try session.feed([UInt8](repeating: 0x16, count: 15_000))
        #expect(failure { try session.feed([UInt8](repeating: 0x16, count: 15_000)) }?.code == .bufferLimitExceeded)

        let client = try pki.clientContext().makeSession(serverName: "localhost", limits: limits)
        let pair = MemoryPair(client: client, server: try pki.serverContext().makeSession())
        try pair.handshake()
        try client.write([UInt8](repeating: 3, count: 15_000))
        #expect(failure { try client.write([UInt8](repeating: 3, count: 15_000)) }?.code == .bufferLimitExceeded)
    }

    @Test("a second connection resumes the first one's session, unless resumption is off or the server differs")
    func resumption() throws {
        let server = try pki.serverContext()
        let client = try pki.clientContext()
        let first = try MemoryPair(client: client, server: server, resumptionKey: "localhost:1")
        try first.handshake()
        #expect(!first.client.isResumed)
        let second = try MemoryPair(client: client, server: server, resumptionKey: "localhost:1")
        try second.handshake()
        #expect(second.client.isResumed)
        #expect(second.server.isResumed)
        #expect(server.resumedHandshakes == 1)
        // A resumed session still carries data and knows the peer.
        try second.client.write([9])
        second.run()
        #expect(second.takeReceived().server == [9])

        // A connection that was just dropped (no close_notify) leaves its session resumable; one that failed
        // does not.
        do {
            let dropped = try MemoryPair(client: client, server: server, resumptionKey: "localhost:4")
            try dropped.handshake()
        }
        let afterDrop = try MemoryPair(client: client, server: server, resumptionKey: "localhost:4")
        try afterDrop.handshake()
        #expect(afterDrop.client.isResumed)

        let elsewhere = try MemoryPair(client: client, server: server, resumptionKey: "localhost:2")
        try elsewhere.handshake()
        #expect(!elsewhere.client.isResumed)

        let noResumption = try pki.serverContext { $0.sessionResumption = false }
        for _ in 0..<2 {
            let pair = try MemoryPair(client: client, server: noResumption, resumptionKey: "localhost:3")
            try pair.handshake()
            #expect(!pair.server.isResumed)
        }
        #expect(noResumption.resumedHandshakes == 0)
    }
}
