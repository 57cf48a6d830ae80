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

/// A port on which nothing listens: bound, then released.
func unusedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(bound == 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP listener that never answers: connections complete in the kernel's backlog but get no
/// handshake, so a client's call hangs until its deadline — or until it is interrupted.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        try #require(bound == 0 && listen(fd, 16) == 0)
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
