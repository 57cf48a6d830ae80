import CoinWatchCore

#if canImport(Glibc)
import Glibc
#endif

/// The client end of a socket pair: writes the fuzz input, reads everything the server sends until it closes.
struct ClientSocket {
    let fd: Int32

    /// Creates a connected, non-blocking `AF_UNIX` stream pair: (client, server).
    static func pair() -> (ClientSocket, Int32) {
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
    func exchange(_ bytes: UnsafeRawBufferPointer, maxOutput: Int, timeoutMilliseconds: Int) -> [UInt8]? {
        var sent = 0
        var finSent = false
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let start = Self.nowMilliseconds()
        while true {
            if !finSent {
                while sent < bytes.count {
                    // write(2): copies up to `count` bytes from the caller's buffer; -1/EAGAIN when the socket is full.
                    let n = write(fd, bytes.baseAddress! + sent, bytes.count - sent)
                    if n > 0 { sent += n } else { break }
                }
                if sent == bytes.count {
                    // shutdown(2) SHUT_WR: the server reads end of file after the bytes already sent.
                    _ = shutdown(fd, Int32(SHUT_WR))
                    finSent = true
                }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN) | (finSent ? 0 : Int16(POLLOUT)), revents: 0)
            let remaining = timeoutMilliseconds - (Self.nowMilliseconds() - start)
            guard remaining > 0 else { return nil }
            _ = poll(&poller, 1, Int32(min(remaining, 100)))
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    output.append(contentsOf: buffer[..<n])
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

    func close() {
        _ = Glibc.close(fd)
    }

    static func nowMilliseconds() -> Int {
        Int(MonotonicClock.nanoseconds() / 1_000_000)
    }
}
