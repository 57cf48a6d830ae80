#if canImport(Glibc)
import Glibc
#endif

/// A loopback port nothing listens on now: bound on port 0, read back, released. Another process may take it
/// later, as with any free port; a test that needs an address nobody answers on uses it at once, and one that
/// needs its connections refused holds a `RefusingLoopbackPort` instead.
public func freeLoopbackPort() throws -> Int {
    let (fd, port) = try loopbackSocket(listening: false)
    close(fd)
    return port
}

/// A loopback port held bound but not listening, for as long as this lives: a connection to it is refused
/// (ECONNREFUSED), and no other socket can take the port meanwhile. A port found free and then released can be
/// bound again by a test running beside, and a connection meant to be refused then succeeds.
public final class RefusingLoopbackPort {
    public let port: Int
    private let fd: Int32

    public init() throws {
        (fd, port) = try loopbackSocket(listening: false)
    }

    deinit {
        close(fd)
    }
}

/// A TCP socket bound to a free loopback port (port 0, read back), listening when `listening`, and that port.
/// The caller closes it.
public func loopbackSocket(listening: Bool) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerProcessError(message: "socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw ServerProcessError(message: "bind: \(reason)")
    }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw ServerProcessError(message: "getsockname: \(reason)")
    }
    guard !listening || listen(fd, 16) == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw ServerProcessError(message: "listen: \(reason)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
