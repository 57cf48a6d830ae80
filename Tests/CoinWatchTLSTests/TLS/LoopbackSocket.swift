import CoinWatchCore
import CoinWatchTLS
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket on 127.0.0.1 for the tests that talk to `openssl s_server` / `s_client`, with every
/// wait bounded by poll(2).
final class LoopbackSocket {
    let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A socket listening on 127.0.0.1 at a free port.
    static func listen() throws -> (socket: LoopbackSocket, port: Int) {
        let (listener, fd) = try makeSocket()
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && Glibc.listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind/listen: \(errno)") }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: Int) throws -> LoopbackSocket {
        let (connection, fd) = try makeSocket()
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw Failure(description: "connect to \(port): \(errno)") }
        return connection
    }

    private static func makeSocket() throws -> (LoopbackSocket, Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        return (LoopbackSocket(fd: fd), fd)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// The next connection, waiting up to `timeout`.
    func accept(timeout: Duration = .seconds(60)) throws -> LoopbackSocket {
        guard try wait(for: Int16(POLLIN), timeout: timeout) else { throw Failure(description: "no connection came") }
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else { throw Failure(description: "accept: \(errno)") }
        // Glibc's module lacks accept4; close-on-exec right away keeps children spawned later from holding it.
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        return LoopbackSocket(fd: accepted)
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure(description: "send: \(errno)") }
            offset += n
        }
    }

    /// What arrives within `timeout`: bytes, an empty array at end of file, nil if nothing came.
    func receive(timeout: Duration) throws -> [UInt8]? {
        guard try wait(for: Int16(POLLIN), timeout: timeout) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && errno == ECONNRESET { return [] }
        guard n >= 0 else { throw Failure(description: "recv: \(errno)") }
        return Array(buffer[..<n])
    }

    private func wait(for events: Int16, timeout: Duration) throws -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let milliseconds = Int32(clamping: timeout.inMilliseconds)
        while true {
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw Failure(description: "poll: \(errno)") }
            return ready > 0
        }
    }
}

/// Drives `session` over `socket` until `done` says so, the peer closes, or `timeout` passes: sends what the
/// session has to send, feeds it what arrives, collects the plaintext.
///
/// - Returns: the plaintext received.
@discardableResult
func drive(
    _ session: TLSSession, over socket: LoopbackSocket, timeout: Duration = .seconds(60),
    until done: (TLSSession, [UInt8]) throws -> Bool
) throws -> [UInt8] {
    let deadline = ContinuousClock.now + timeout
    var plaintext = [UInt8]()
    _ = try? session.advanceHandshake()
    while ContinuousClock.now < deadline {
        try socket.send(session.takeOutput())
        if session.state == .failed, let error = session.error { throw error }
        if try done(session, plaintext) { break }
        guard let bytes = try socket.receive(timeout: .milliseconds(200)) else { continue }
        if bytes.isEmpty {
            try session.inputEnded()
            break
        }
        try session.feed(bytes)
        plaintext += try session.readAvailable()
        if session.state == .closed { break }
    }
    try socket.send(session.takeOutput())
    return plaintext
}
