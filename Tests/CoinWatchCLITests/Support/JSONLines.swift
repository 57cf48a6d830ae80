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
