import Foundation
import Testing

/// Parses one line of `--json` output into a dictionary, failing the test when it is not one object.
func jsonObject(_ line: Substring, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(value as? [String: Any], "not a JSON object: \(line)", sourceLocation: sourceLocation)
}

/// The non-empty lines of some output.
func lines(_ text: String) -> [Substring] {
    text.split(separator: "\n", omittingEmptySubsequences: true)
}

/// A TCP socket bound to a free loopback port (listening when `listening`), and that port.
func loopbackSocket(listening: Bool) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard bound == 0, !listening || listen(fd, 16) == 0 else {
        close(fd)
        try #require(Bool(false), "cannot bind a loopback socket")
        return (-1, 0)
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// A port on which nothing listens: bound, then released.
func unusedPort() throws -> Int {
    let (fd, port) = try loopbackSocket(listening: false)
    close(fd)
    return port
}

/// A TCP listener that never answers: connections complete in the kernel's backlog but get no
/// handshake, so a client's call hangs until its deadline — or until it is interrupted.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        (fd, port) = try loopbackSocket(listening: true)
    }

    /// Connections taken by `waitForClientBytes`, kept open (and silent) until the listener goes.
    private var accepted: [Int32] = []

    /// Accepts one connection and waits until its client has sent something (its `Hello`): from then on the client
    /// is past its start-up and waiting for an answer that never comes. Bounded by `seconds` for the accept and
    /// again for the first byte.
    func waitForClientBytes(seconds: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        // On Linux a listening socket's receive timeout bounds accept() too.
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let client = accept(fd, nil, nil)
        try #require(client >= 0, "no client connected within \(seconds) s", sourceLocation: sourceLocation)
        accepted.append(client)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let received = recv(client, &byte, 1, Int32(MSG_PEEK))
        try #require(received == 1, "the client sent nothing within \(seconds) s", sourceLocation: sourceLocation)
    }

    deinit {
        for client in accepted { close(client) }
        close(fd)
    }
}

/// A TCP server that answers each connection with `reply` and closes it, whatever the client sends: an HTTP or
/// other non-CoinWatch server as a client meets it.
final class CannedReplyServer: @unchecked Sendable {
    // @unchecked Sendable: `fd` and `port` are set once in init; the accept thread only reads them.
    let fd: Int32
    let port: Int

    init(reply: String) throws {
        (fd, port) = try loopbackSocket(listening: true)
        let listener = fd
        let bytes = Array(reply.utf8)
        Thread {
            // Until the listener is shut down in deinit, which makes accept fail.
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                // Half-close and read until the client hangs up: closing with its request unread would reset the
                // connection, and a reset can discard the reply before the client reads it.
                shutdown(client, Int32(SHUT_WR))
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var buffer = [UInt8](repeating: 0, count: 4096)
                while buffer.withUnsafeMutableBytes({ recv(client, $0.baseAddress, $0.count, 0) }) > 0 {}
                close(client)
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
