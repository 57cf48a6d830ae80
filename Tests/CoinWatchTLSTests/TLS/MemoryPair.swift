import CoinWatchTLS
import CoinWatchTestSupport

/// A client and a server session wired to each other in memory: `run()` carries each side's ciphertext to the
/// other until neither has anything more to say, collecting the plaintext each receives and the error each
/// side fails with.
final class MemoryPair {
    let client: TLSSession
    let server: TLSSession
    private(set) var clientReceived: [UInt8] = []
    private(set) var serverReceived: [UInt8] = []
    private(set) var clientError: TLSError?
    private(set) var serverError: TLSError?
    private(set) var clientSawClose = false
    private(set) var serverSawClose = false

    init(client: TLSSession, server: TLSSession) {
        self.client = client
        self.server = server
    }

    /// Builds a pair from two contexts.
    convenience init(
        client clientContext: TLSContext, server serverContext: TLSContext, serverName: String? = "localhost",
        resumptionKey: String? = nil
    ) throws {
        self.init(
            client: try clientContext.makeSession(serverName: serverName, resumptionKey: resumptionKey),
            server: try serverContext.makeSession())
    }

    /// Exchanges bytes until a round moves none (bounded: a handshake takes a few rounds).
    func run() {
        for _ in 0..<100 {
            let toServer = client.takeOutput()
            deliver(toServer, to: server, received: &serverReceived, error: &serverError, sawClose: &serverSawClose)
            let toClient = server.takeOutput()
            deliver(toClient, to: client, received: &clientReceived, error: &clientError, sawClose: &clientSawClose)
            if toServer.isEmpty && toClient.isEmpty && client.pendingOutputCount == 0 && server.pendingOutputCount == 0 {
                return
            }
        }
    }

    /// Runs and requires both sides to have completed the handshake without an error.
    func handshake() throws {
        // The client speaks first.
        _ = try? client.advanceHandshake()
        run()
        if let clientError { throw clientError }
        if let serverError { throw serverError }
        guard client.isHandshakeComplete, server.isHandshakeComplete else {
            throw TLSError(code: .handshakeFailed, message: "the in-memory handshake did not finish")
        }
    }

    /// Takes what each side has received so far.
    func takeReceived() -> (client: [UInt8], server: [UInt8]) {
        defer {
            clientReceived = []
            serverReceived = []
        }
        return (clientReceived, serverReceived)
    }

    private func deliver(
        _ bytes: [UInt8], to session: TLSSession, received: inout [UInt8], error: inout TLSError?,
        sawClose: inout Bool
    ) {
        guard error == nil else { return }
        do {
            if !bytes.isEmpty { try session.feed(bytes) }
            try session.advanceHandshake()
            guard session.state != .closed || !sawClose else { return }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let result = try buffer.withUnsafeMutableBytes { try session.read(into: $0) }
                switch result {
                case .bytes(let count): received += buffer[..<count]
                case .needsInput: return
                case .closed:
                    sawClose = true
                    return
                }
            }
        } catch let failure as TLSError {
            error = failure
        } catch {
            fatalError("unexpected \(error)")
        }
    }
}

/// Contexts over a test PKI, as most tests want them.
extension TestCertificates {
    func serverContext(
        _ identity: KeyPath<TestCertificates, TestIdentity> = \.server, protocols: [String] = [],
        configure: (inout TLSConfiguration) -> Void = { _ in }
    ) throws -> TLSContext {
        let chosen = self[keyPath: identity]
        var configuration = TLSConfiguration.server(
            certificateChainFile: chosen.certificateFile, privateKeyFile: chosen.privateKeyFile,
            applicationProtocols: protocols)
        configure(&configuration)
        return try TLSContext(configuration)
    }

    /// A client trusting only the test CA (not the system's CAs, so nothing outside the test can vouch).
    func clientContext(protocols: [String] = [], configure: (inout TLSConfiguration) -> Void = { _ in }) throws
        -> TLSContext
    {
        var configuration = TLSConfiguration.client(caFile: caFile, applicationProtocols: protocols)
        configuration.usesSystemTrustStore = false
        configure(&configuration)
        return try TLSContext(configuration)
    }
}
