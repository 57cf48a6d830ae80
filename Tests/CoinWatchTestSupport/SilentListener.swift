#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener that never answers: connections complete in the kernel's backlog but get no
/// handshake, so a client's call hangs until its deadline — or until it is interrupted.
public final class SilentListener {
    public let fd: Int32
    public let port: Int

    public init() throws {
        (fd, port) = try loopbackSocket(listening: true)
    }

    /// Connections taken by `waitForClientBytes`, kept open (and silent) until the listener goes.
    private var accepted: [Int32] = []

    /// Accepts one connection and waits until its client has sent something (its `Hello`): from then on the client
    /// is past its start-up and waiting for an answer that never comes. Bounded by `seconds` for the accept and
    /// again for the first byte.
    public func waitForClientBytes(seconds: Int = 60) throws {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        // On Linux a listening socket's receive timeout bounds accept() too.
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let client = accept(fd, nil, nil)
        guard client >= 0 else { throw SilentListenerError(description: "no client connected within \(seconds) s") }
        accepted.append(client)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let received = recv(client, &byte, 1, Int32(MSG_PEEK))
        guard received == 1 else { throw SilentListenerError(description: "the client sent nothing within \(seconds) s") }
    }

    deinit {
        for client in accepted { close(client) }
        close(fd)
    }
}

/// What `SilentListener.waitForClientBytes` did not see in time.
public struct SilentListenerError: Error, CustomStringConvertible, Sendable {
    public let description: String
}
