#if canImport(Glibc)
import Glibc
#endif

/// Why a `RawClient` could not connect: the failing call and its `errno`.
public struct RawClientError: Error, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    public var description: String { "\(function) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// A plain IPv4 socket to a loopback port, for talking to a server as a non-framing client would: bytes in, bytes
/// out, every read bounded by `receiveTimeout`.
///
/// Sends block (the server reads them); reads do not: they poll the socket and sleep between tries, so a test
/// waiting for an answer gives its thread back to the task pool. A blocking `recv` on one of the pool's few threads
/// would stall every other test of the run behind it until its answer came.
public final class RawClient {
    private var fd: Int32

    /// How long a read waits for its first byte. A minute: on a busy machine, at the start of a full run when
    /// every suite starts at once, what a test waits for (a shutdown's last message, say) has taken over ten
    /// seconds to be sent. A read that ends at the end of the stream returns at once, whatever this is.
    public static let receiveTimeout: Duration = .seconds(60)

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError(function: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let error = RawClientError(function: "connect", errno: errno)
            // Closed here and marked closed: an initializer that throws once every property is set still runs
            // deinit, whose close() would otherwise close the number again — by then, perhaps, another test's
            // socket.
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Shuts the writing side down (`shutdown(SHUT_WR)`): the server reads the end of the stream, and this side
    /// can still read.
    public func shutdownWrite() {
        if fd >= 0 { shutdown(fd, Int32(SHUT_WR)) }
    }

    public func send(_ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(sent == bytes.count, "short blocking send")
    }

    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Reads what is available (blocking for the first byte, up to `receiveTimeout`); empty at the end.
    public func readSome() async -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = await receive(into: &buffer)
        return n > 0 ? Array(buffer[..<n]) : []
    }

    /// Reads until end of file (or `receiveTimeout` without a byte, or `limit` bytes).
    public func readToEnd(limit: Int = 1 << 20) async -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while result.count < limit {
            let n = await receive(into: &buffer)
            if n <= 0 { break }
            result += buffer[..<n]
        }
        return result
    }

    /// One `recv(MSG_DONTWAIT)`, tried again a millisecond later while nothing is there, until `receiveTimeout`: the
    /// byte count, 0 at the end, -1 on an error or when nothing came in time.
    private func receive(into buffer: inout [UInt8]) async -> Int {
        let deadline = ContinuousClock.now + Self.receiveTimeout
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline,
                !Task.isCancelled
            else {
                return n
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
