import CoinWatchCore
public import CoinWatchTLS

#if canImport(Glibc)
import Glibc
#endif

/// The client end of a socket pair: writes the fuzz input, reads everything the server sends until it closes.
public struct ClientSocket {
    public let fd: Int32

    /// Creates a connected, non-blocking `AF_UNIX` stream pair: (client, server).
    public static func pair() -> (ClientSocket, Int32) {
        var fds: [Int32] = [-1, -1]
        // socketpair(2): fills fds with two connected descriptors that the caller owns and closes.
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &fds) == 0 else {
            fatalError("socketpair: \(String(cString: strerror(errno)))")
        }
        return (ClientSocket(fd: fds[0]), fds[1])
    }

    /// Sends `bytes` (then FIN) while collecting the server's output, until the server closes its side or
    /// `timeoutMilliseconds` pass. Returns nil on timeout: the server neither finished nor closed.
    ///
    /// With `tls`, a client session whose handshake has begun, the handshake is completed first, `bytes` go as
    /// application data (without close_notify: end of file alone ends the input, as in plaintext; a close_notify
    /// would make the server's session answer with its own and send nothing more) and the output is what the
    /// server's records decrypt to, up to its alert or close.
    public func exchange(
        _ bytes: UnsafeRawBufferPointer, maxOutput: Int, timeoutMilliseconds: Int, tls: TLSSession? = nil
    ) -> [UInt8]? {
        // What is still to be written to the socket: the input itself, or the session's records.
        var pending: [UInt8] = tls == nil ? Array(bytes) : []
        var inputQueued = tls == nil
        var finSent = false
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let start = Self.nowMilliseconds()
        while true {
            if let tls {
                if tls.isHandshakeComplete, !inputQueued {
                    inputQueued = true
                    do {
                        try tls.write(bytes)
                    } catch {
                        fatalError("the client cannot encrypt \(bytes.count) bytes: \(error)")
                    }
                }
                while true {
                    let count = buffer.withUnsafeMutableBytes { tls.drainOutput(into: $0) }
                    if count == 0 { break }
                    pending += buffer[..<count]
                }
            }
            if !finSent {
                while !pending.isEmpty {
                    // write(2): copies up to `count` bytes from the caller's buffer; -1/EAGAIN when the socket is full.
                    let n = pending.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if n > 0 { pending.removeFirst(n) } else { break }
                }
                if inputQueued && pending.isEmpty {
                    // shutdown(2) SHUT_WR: the server reads end of file after the bytes already sent.
                    _ = shutdown(fd, Int32(SHUT_WR))
                    finSent = true
                }
            }
            // Writability only while there is something to write: a TLS client waiting for the server's handshake
            // messages has nothing, and would spin.
            var poller = pollfd(fd: fd, events: Int16(POLLIN) | (pending.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            let remaining = timeoutMilliseconds - (Self.nowMilliseconds() - start)
            guard remaining > 0 else { return nil }
            _ = poll(&poller, 1, Int32(min(remaining, 100)))
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    if let tls {
                        do {
                            try tls.feed(Array(buffer[..<n]))
                            if !tls.isHandshakeComplete { _ = try tls.advanceHandshake() }
                            output += try tls.readAvailable()
                        } catch {
                            // The server's alert or close: what it sent before is the answer.
                            return output
                        }
                    } else {
                        output.append(contentsOf: buffer[..<n])
                    }
                    guard output.count <= maxOutput else {
                        fatalError("the server sent more than \(maxOutput) bytes for one input")
                    }
                    continue
                }
                if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    // End of file, or ECONNRESET when the server closed with our bytes unread.
                    return output
                }
                break
            }
        }
    }

    public func close() {
        _ = Glibc.close(fd)
    }

    public static func nowMilliseconds() -> Int {
        Int(MonotonicClock.nanoseconds() / 1_000_000)
    }
}
