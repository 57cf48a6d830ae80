import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("TLS contexts and reloading")
struct TLSContextTests {
    @Test("a context reports unusable files by kind, and never prompts for an encrypted key")
    func configurationErrors() async throws {
        let pki = try await TestCertificates.shared()
        let directory = try TemporaryDirectory(prefix: "tls-context")
        let missing = directory.appending("missing.pem").path
        let garbage = directory.appending("garbage.pem").path
        try "not a certificate\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let encryptedKey = directory.appending("encrypted.key").path
        try await OpenSSLCommand.succeed([
            "pkey", "-in", pki.server.privateKeyFile, "-aes-128-cbc", "-passout", "pass:secret", "-out", encryptedKey,
        ])

        func error(_ configuration: TLSConfiguration) -> TLSError? {
            failure { _ = try TLSContext(configuration) }
        }
        let server = TLSConfiguration.server(
            certificateChainFile: pki.server.certificateFile, privateKeyFile: pki.server.privateKeyFile)
        var changed = server
        changed.certificateChainFile = missing
        #expect(error(changed)?.code == .fileUnreadable)
        #expect(error(changed)?.message.contains(missing) == true)
        changed.certificateChainFile = garbage
        #expect(error(changed)?.code == .invalidCertificate)
        changed = server
        changed.privateKeyFile = missing
        #expect(error(changed)?.code == .fileUnreadable)
        changed.privateKeyFile = pki.client.privateKeyFile
        #expect(error(changed)?.code == .invalidKey)
        #expect(error(changed)?.message.contains("does not match") == true)
        changed.privateKeyFile = encryptedKey
        #expect(error(changed)?.code == .invalidKey)
        changed = server
        changed.certificateChainFile = nil
        #expect(error(changed)?.code == .invalidArgument)
        changed = server
        changed.clientCertificates = .required
        #expect(error(changed)?.code == .invalidArgument)
        changed.caFile = missing
        #expect(error(changed)?.code == .fileUnreadable)
        #expect(error(.client(caFile: missing))?.code == .fileUnreadable)
        #expect(error(.client(caFile: garbage))?.code == .invalidCertificate)
        #expect(error(server) == nil)
    }

    @Test("reload: new files take effect for new sessions; bad files keep the old context and say why")
    func reload() async throws {
        // Its own PKI: this test rewrites the server's files.
        let pki = try await TestCertificates.make()
        let certificate = pki.path("live.pem")
        let key = pki.path("live.key")
        func install(_ identity: TestIdentity) throws {
            try FileManager.default.removeItem(atPath: certificate)
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: identity.certificateFile, toPath: certificate)
            try FileManager.default.copyItem(atPath: identity.privateKeyFile, toPath: key)
        }
        try FileManager.default.copyItem(atPath: pki.server.certificateFile, toPath: certificate)
        try FileManager.default.copyItem(atPath: pki.server.privateKeyFile, toPath: key)
        let reloadable = try ReloadableTLSContext(.server(certificateChainFile: certificate, privateKeyFile: key))
        let client = try pki.clientContext()

        let open = MemoryPair(
            client: try client.makeSession(serverName: "localhost"), server: try reloadable.makeSession())
        try open.handshake()
        #expect(open.client.peerSubject == "CN=localhost")

        // A renewed certificate with another subject: new sessions present it.
        let renewedIdentity = try await onOwnThread {
            try pki.issue("renewed", subject: "/O=Renewed/CN=localhost", names: "DNS:localhost")
        }
        try install(renewedIdentity)
        let before = reloadable.context
        try reloadable.reload()
        #expect(reloadable.context !== before)
        let renewed = MemoryPair(
            client: try client.makeSession(serverName: "localhost"), server: try reloadable.makeSession())
        try renewed.handshake()
        #expect(renewed.client.peerSubject == "CN=localhost,O=Renewed")

        // The session opened before the reload still works, on its old context.
        #expect(open.server.context === before)
        try open.client.write(Array("still here".utf8))
        open.run()
        #expect(open.takeReceived().server == Array("still here".utf8))

        // A broken certificate, a key that does not match, a missing file: refused, the renewed context stays.
        let current = reloadable.context
        try "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".write(
            toFile: certificate, atomically: true, encoding: .utf8)
        #expect(failure { try reloadable.reload() }?.code == .invalidCertificate)
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: pki.wrongHost.certificateFile, toPath: certificate)
        let mismatch = try #require(failure { try reloadable.reload() })
        #expect(mismatch.code == .invalidKey)
        try FileManager.default.removeItem(atPath: key)
        #expect(failure { try reloadable.reload() }?.code == .fileUnreadable)
        #expect(reloadable.context === current)
        let after = MemoryPair(client: try client.makeSession(serverName: "localhost"), server: try reloadable.makeSession())
        try after.handshake()
        #expect(after.client.peerSubject == "CN=localhost,O=Renewed")
    }

    @Test("contexts and keys are shared by sessions on several threads")
    func concurrentSessions() async throws {
        let pki = try await TestCertificates.shared()
        let server = try pki.serverContext()
        let client = try pki.clientContext()
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for _ in 0..<10 {
                        let pair = try MemoryPair(client: client, server: server, resumptionKey: "server")
                        try pair.handshake()
                        try pair.client.write(Array("m\(index)".utf8))
                        pair.run()
                        guard pair.takeReceived().server == Array("m\(index)".utf8) else { return false }
                    }
                    return true
                }
            }
            return try await group.reduce(true) { $0 && $1 }
        }
        #expect(results)
        #expect(server.resumedHandshakes > 0)
    }
}
