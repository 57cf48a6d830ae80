import CoinWatchTestSupport
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
