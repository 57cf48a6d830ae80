// One of the two files that touch C directly (the other is Epoll.swift). Everything here is an
// `@inline(never)` wrapper that reads errno right after the call, before any Swift code (ARC,
// allocation) could overwrite it, retries EINTR where that is the right thing to do, and reports a
// would-block result as a value rather than an error, because that is the common case on a
// non-blocking socket.
internal import CCoinWatchSystem
internal import Glibc

/// Namespace for system calls used by the I/O layer.
enum Sys {
    static let EAGAIN_ = EAGAIN
    static let EWOULDBLOCK_ = EWOULDBLOCK
    static let EINTR_ = EINTR
    static let EINVAL_ = EINVAL
    static let ECONNRESET_ = ECONNRESET
    static let ECONNREFUSED_ = ECONNREFUSED
    static let ECONNABORTED_ = ECONNABORTED
    static let ESHUTDOWN_ = ESHUTDOWN
    static let ETIMEDOUT_ = ETIMEDOUT
    static let EPIPE_ = EPIPE
    static let EMFILE_ = EMFILE
    static let ENFILE_ = ENFILE
    static let ENOBUFS_ = ENOBUFS
    static let ENOMEM_ = ENOMEM
    static let EBADF_ = EBADF
    static let EPROTO_ = EPROTO

    /// IOV_MAX: the most buffers one `sendmsg` accepts.
    static let maxIOVectors = Int(CW_SYS_IOV_MAX)

    static func errorMessage(_ code: Int32) -> String {
        // strerror(3): glibc >= 2.32 returns a pointer to an immutable table entry for known codes.
        String(cString: strerror(code))
    }

    @inline(__always)
    private static func isWouldBlock(_ code: Int32) -> Bool {
        code == EAGAIN || code == EWOULDBLOCK
    }

    // MARK: File descriptors

    /// Closes `fd`. EINTR is not retried: on Linux the descriptor is released even then, and a retry
    /// could close a descriptor another thread has just been given.
    @inline(never)
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case endOfFile
    }

    /// `read(2)` into `buffer`.
    @inline(never)
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> ReadResult {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfFile }
            let code = Glibc.errno
            if code == EINTR { continue }
            if isWouldBlock(code) { return .wouldBlock }
            throw IOError(errno: code, function: "read")
        }
    }

    /// `sendmsg(2)` of the first `count` vectors of `vectors`; nil when the socket buffer is full.
    @inline(never)
    static func sendv(_ fd: Int32, _ vectors: IOVectorScratch, count: Int) throws(IOError) -> Int? {
        while true {
            let n = cw_sys_sendv(fd, vectors.base, Int32(count))
            if n >= 0 { return n }
            let code = Glibc.errno
            if code == EINTR { continue }
            if isWouldBlock(code) { return nil }
            throw IOError(errno: code, function: "sendmsg")
        }
    }

    // MARK: Sockets

    /// Turns a pending `SO_ERROR` into an error; nil when there is none.
    @inline(never)
    static func pendingSocketError(_ fd: Int32) -> IOError? {
        var error: Int32 = 0
        if cw_sys_socket_error(fd, &error) != 0 {
            return IOError(errno: Glibc.errno, function: "getsockopt(SO_ERROR)")
        }
        return error == 0 ? nil : IOError(errno: error, function: "socket")
    }

    @inline(never)
    static func setNoDelay(_ fd: Int32) throws(IOError) {
        if cw_sys_set_tcp_nodelay(fd, 1) != 0 {
            throw IOError(errno: Glibc.errno, function: "setsockopt(TCP_NODELAY)")
        }
    }

    @inline(never)
    static func setKeepAlive(_ fd: Int32, _ on: Bool) throws(IOError) {
        if cw_sys_set_keepalive(fd, on ? 1 : 0) != 0 {
            throw IOError(errno: Glibc.errno, function: "setsockopt(SO_KEEPALIVE)")
        }
    }

    /// `shutdown(fd, SHUT_WR)`: sends FIN after the queued data. Errors (the peer is already gone)
    /// are ignored: the caller closes the descriptor next either way.
    @inline(never)
    static func shutdownOutput(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    @inline(never)
    static func localPort(_ fd: Int32) throws(IOError) -> Int {
        let port = cw_sys_local_port(fd)
        if port < 0 { throw IOError(errno: Glibc.errno, function: "getsockname") }
        return Int(port)
    }

    /// "host:port" of the connected peer, or nil once it is gone.
    static func peerName(_ fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let ok = buffer.withUnsafeMutableBufferPointer { cw_sys_peer_name(fd, $0.baseAddress, $0.count) == 0 }
        return ok ? buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : nil
    }

    /// "host:port" the socket is bound to, or nil on error.
    static func localName(_ fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let ok = buffer.withUnsafeMutableBufferPointer { cw_sys_local_name(fd, $0.baseAddress, $0.count) == 0 }
        return ok ? buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : nil
    }

    /// Opens a non-blocking listening socket bound to `address` (SO_REUSEADDR on).
    @inline(never)
    static func listen(on address: SocketAddress, backlog: Int32) throws(IOError) -> Int32 {
        let fd = cw_sys_tcp_socket(address.family)
        if fd < 0 { throw IOError(errno: Glibc.errno, function: "socket", detail: address.description) }
        var failure: IOError?
        if cw_sys_set_reuseaddr(fd, 1) != 0 {
            failure = IOError(errno: Glibc.errno, function: "setsockopt(SO_REUSEADDR)")
        } else if case let code = address.withSockAddr({ Glibc.bind(fd, $0, $1) == 0 ? 0 : Glibc.errno }), code != 0 {
            // errno is read inside the closure, before the buffer access around the call ends.
            failure = IOError(errno: code, function: "bind", detail: address.description)
        } else if Glibc.listen(fd, backlog) != 0 {
            failure = IOError(errno: Glibc.errno, function: "listen", detail: address.description)
        }
        if let failure {
            close(fd)
            throw failure
        }
        return fd
    }

    enum AcceptResult {
        case accepted(Int32)
        case wouldBlock
    }

    /// `accept4(2)`; the new descriptor is non-blocking and close-on-exec.
    @inline(never)
    static func accept(_ fd: Int32) throws(IOError) -> AcceptResult {
        while true {
            let child = cw_sys_accept4(fd)
            if child >= 0 { return .accepted(child) }
            let code = Glibc.errno
            if code == EINTR { continue }
            if isWouldBlock(code) { return .wouldBlock }
            throw IOError(errno: code, function: "accept4")
        }
    }

    /// Starts a non-blocking connect; returns the socket and whether it is already connected.
    /// On failure the socket is closed.
    @inline(never)
    static func startConnect(to address: SocketAddress) throws(IOError) -> (fd: Int32, connected: Bool) {
        let fd = cw_sys_tcp_socket(address.family)
        if fd < 0 { throw IOError(errno: Glibc.errno, function: "socket", detail: address.description) }
        // connect(2) on a non-blocking socket: EINPROGRESS means "completes later, poll for
        // writability, then read SO_ERROR". EINTR also lets it complete asynchronously, and must
        // not be retried (a retry would report EALREADY).
        let code = address.withSockAddr { Glibc.connect(fd, $0, $1) == 0 ? 0 : Glibc.errno }
        if code == 0 { return (fd, true) }
        if code == EINPROGRESS || code == EINTR { return (fd, false) }
        close(fd)
        throw IOError(errno: code, function: "connect", detail: address.description)
    }

    // MARK: Name resolution

    /// Resolves `host` (a name, "localhost", or an IPv4/IPv6 literal; "" or "*" for any address)
    /// and `port` to TCP socket addresses, IPv4 first. Blocks for names that need DNS.
    static func resolve(host: String, port: Int, passive: Bool) throws(IOError) -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw IOError(errno: EINVAL, function: "resolve", detail: "port \(port) is outside 0...65535")
        }
        let wildcard = host.isEmpty || host == "*"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive || wildcard ? AI_PASSIVE : 0)
        // The brackets of "[::1]" are URL syntax, not part of the literal.
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var list: UnsafeMutablePointer<addrinfo>?
        // getaddrinfo(3): on success `list` is allocated by the resolver and must be released with
        // freeaddrinfo; on failure it returns an EAI_* code (EAI_SYSTEM: see errno).
        let status = wildcard
            ? getaddrinfo(nil, String(port), &hints, &list)
            : getaddrinfo(name, String(port), &hints, &list)
        if status != 0 {
            let code = status == EAI_SYSTEM ? Glibc.errno : 0
            let reason = String(cString: gai_strerror(status))
            throw IOError(errno: code, function: "getaddrinfo", detail: "\(host):\(port): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var v4: [SocketAddress] = []
        var v6: [SocketAddress] = []
        var entry = list
        while let info = entry {
            if let addr = info.pointee.ai_addr {
                let raw = UnsafeRawBufferPointer(start: addr, count: Int(info.pointee.ai_addrlen))
                let address = SocketAddress(family: info.pointee.ai_family, bytes: raw)
                if info.pointee.ai_family == AF_INET { v4.append(address) }
                if info.pointee.ai_family == AF_INET6 { v6.append(address) }
            }
            entry = info.pointee.ai_next
        }
        let all = v4 + v6
        if all.isEmpty {
            throw IOError(errno: 0, function: "getaddrinfo", detail: "\(host):\(port): no IPv4 or IPv6 address")
        }
        return all
    }

    // MARK: Threads

    /// The calling thread's id, comparable with `ThreadHandle.id`.
    @inline(__always)
    static func currentThreadID() -> UInt {
        UInt(pthread_self())
    }

    /// Raises the calling thread's nice value by `increment`; false if the system refused.
    @discardableResult
    static func lowerThreadPriority(by increment: Int32) -> Bool {
        cw_sys_lower_thread_priority(increment) == 0
    }

    /// The calling thread's nice value; nil if it cannot be read.
    static func threadNiceValue() -> Int32? {
        var nice: Int32 = 0
        return cw_sys_thread_nice(&nice) == 0 ? nice : nil
    }

    /// Puts the calling thread under batch scheduling (`SCHED_BATCH`); false if the system refused.
    @discardableResult
    static func useBatchScheduling() -> Bool {
        cw_sys_use_batch_scheduling() == 0
    }

    /// Whether the calling thread is under batch scheduling; nil if its policy cannot be read.
    static func threadIsBatchScheduled() -> Bool? {
        switch cw_sys_thread_is_batch_scheduled() {
        case 1: true
        case 0: false
        default: nil
        }
    }

    /// Starts a detached thread named `name` (at most 15 bytes are kept) running `body`. Callers that
    /// need to wait for it signal their own completion (see `EventLoop.join`).
    static func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Box {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.body = body
            }
        }
        // pthread_create(3): the start routine receives our retained box and releases it.
        // pthread_detach(3): the thread's resources are freed when it returns; it is never joined.
        let context = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            _ = cw_sys_set_thread_name(box.name)
            box.body()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed: \(errorMessage(rc))")
        _ = pthread_detach(thread)
    }

    // MARK: Processors

    /// Processors online (sysconf), at least 1.
    static func onlineProcessorCount() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// CPUs in the calling thread's affinity mask, or nil if the kernel would not say.
    static func affinityProcessorCount() -> Int? {
        let count = cw_sys_affinity_cpu_count()
        return count > 0 ? Int(count) : nil
    }
}

/// A resolved TCP address (IPv4 or IPv6), stored as raw `sockaddr` bytes so it is `Sendable`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    let family: Int32
    private let bytes: [UInt8]

    init(family: Int32, bytes: UnsafeRawBufferPointer) {
        self.family = family
        self.bytes = Array(bytes)
    }

    /// True for IPv6, false for IPv4.
    public var isIPv6: Bool { family == AF_INET6 }

    /// "host:port", or "[host]:port" for IPv6.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        bytes.withUnsafeBytes { raw in
            buffer.withUnsafeMutableBufferPointer { out in
                _ = cw_sys_format_address(raw.baseAddress, out.baseAddress, out.count)
            }
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Resolves `host:port` (see `Sys.resolve`); IPv4 addresses come first.
    public static func resolve(host: String, port: Int) throws(IOError) -> [SocketAddress] {
        try Sys.resolve(host: host, port: port, passive: false)
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}

/// A loop-owned array of `iovec`s handed to `sendmsg`, so building a batch never allocates.
///
/// Only the owning loop's thread touches it (see `EventLoop`).
final class IOVectorScratch {
    fileprivate let base: UnsafeMutablePointer<cw_sys_iovec>
    let capacity: Int

    init(capacity: Int = Sys.maxIOVectors) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
        base.initialize(repeating: cw_sys_iovec(base: nil, length: 0), count: capacity)
    }

    deinit {
        base.deallocate()
    }

    @inline(__always)
    func set(_ index: Int, base pointer: UnsafeRawPointer, length: Int) {
        base[index] = cw_sys_iovec(base: pointer, length: length)
    }
}
