import CoinWatchTLS

#if canImport(Glibc)
import Glibc
#endif

/// The TLS side of the harness: a throw-away server certificate made with the `openssl` command, the server's
/// transforms, and a client that completes a real handshake over a socket before it sends an input as
/// application data, so the bytes the server decrypts are the fuzzer's.
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

    /// Completes a handshake with the server at the other end of `socket`, sends `bytes` as application data
    /// followed by end of file, and returns everything the server sent decrypted, once it closes. Nil when
    /// `timeoutMilliseconds` pass first.
    func exchange(
        _ bytes: UnsafeRawBufferPointer, over socket: ClientSocket, maxOutput: Int, timeoutMilliseconds: Int
    ) -> [UInt8]? {
        let session: TLSSession
        do {
            session = try clientContext.makeSession()
            _ = try session.advanceHandshake()
        } catch {
            fatalError("cannot start the client's handshake: \(error)")
        }
        var output: [UInt8] = []
        var pending: [UInt8] = []
        var sentData = false
        var finSent = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let start = ClientSocket.nowMilliseconds()
        while true {
            if session.isHandshakeComplete, !sentData {
                sentData = true
                do {
                    try session.write(bytes)
                } catch {
                    fatalError("the client cannot encrypt \(bytes.count) bytes: \(error)")
                }
                // No close_notify: end of file alone ends the input, as in plaintext. (A close_notify would make
                // the server's session answer with its own and send nothing more, RFC 5246's rule.)
            }
            // Everything the session wants sent, then end of file once the input is out.
            while true {
                let count = buffer.withUnsafeMutableBytes { session.drainOutput(into: $0) }
                if count == 0 { break }
                pending += buffer[..<count]
            }
            while !pending.isEmpty {
                // write(2): copies up to `count` bytes; -1/EAGAIN when the socket is full.
                let n = pending.withUnsafeBytes { write(socket.fd, $0.baseAddress, $0.count) }
                if n > 0 { pending.removeFirst(n) } else { break }
            }
            if sentData, pending.isEmpty, !finSent {
                // shutdown(2) SHUT_WR: the server reads end of file after the bytes already sent.
                _ = shutdown(socket.fd, Int32(SHUT_WR))
                finSent = true
            }
            var poller = pollfd(fd: socket.fd, events: Int16(POLLIN) | (pending.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            let remaining = timeoutMilliseconds - (ClientSocket.nowMilliseconds() - start)
            guard remaining > 0 else { return nil }
            _ = poll(&poller, 1, Int32(min(remaining, 100)))
            while true {
                let n = buffer.withUnsafeMutableBytes { read(socket.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    do {
                        try session.feed(Array(buffer[..<n]))
                        if !session.isHandshakeComplete { _ = try session.advanceHandshake() }
                        output += try session.readAvailable()
                    } catch {
                        // The server's alert or close: what it sent before is the answer.
                        return output
                    }
                    guard output.count <= maxOutput else {
                        fatalError("the server sent more than \(maxOutput) bytes for one input")
                    }
                    continue
                }
                if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    return output
                }
                break
            }
        }
    }
}
