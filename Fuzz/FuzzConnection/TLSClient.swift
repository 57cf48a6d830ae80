import CoinWatchTLS

#if canImport(Glibc)
import Glibc
#endif

/// The TLS side of the harness: a throw-away server certificate made with the `openssl` command, the server's
/// transforms, and the client sessions `ClientSocket.exchange` completes a real handshake with before it sends an
/// input as application data, so the bytes the server decrypts are the fuzzer's.
struct TLSFixture: Sendable {
    let serverTransforms: TLSServerTransforms
    let clientContext: TLSContext

    /// Makes a P-256 certificate for `localhost` in a new temporary directory.
    init() {
        var template = Array("/tmp/coinwatch-fuzz-tls-XXXXXX".utf8CString)
        // mkdtemp(3): replaces the Xs and creates the directory (0700); NULL on failure.
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        let certificate = directory + "/cert.pem"
        let key = directory + "/key.pem"
        let command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(key) "
            + "-out \(certificate) -subj /CN=localhost -days 2 >/dev/null 2>&1"
        // system(3): runs the command through /bin/sh and returns its wait status.
        guard system(command) == 0 else { fatalError("cannot make a certificate with: \(command)") }
        do {
            serverTransforms = TLSServerTransforms(
                context: try ReloadableTLSContext(.server(certificateChainFile: certificate, privateKeyFile: key)),
                requiresTransform: false)
            var client = TLSConfiguration.client()
            client.usesSystemTrustStore = false
            client.verifiesPeer = false
            clientContext = try TLSContext(client)
        } catch {
            fatalError("cannot set up TLS: \(error)")
        }
    }

    /// A client session for one input, its ClientHello already written (the server speaks second).
    func clientSession() -> TLSSession {
        do {
            let session = try clientContext.makeSession()
            _ = try session.advanceHandshake()
            return session
        } catch {
            fatalError("cannot start the client's handshake: \(error)")
        }
    }
}
