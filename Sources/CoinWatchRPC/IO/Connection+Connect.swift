extension Connection {
    /// Connects to `host:port` without blocking the loop, trying each resolved address in turn
    /// (IPv4 first), and calls `completion` on `loop` with an unstarted connection (TCP_NODELAY on)
    /// or the last error. `timeout` bounds the whole attempt. If `loop` has already stopped,
    /// `completion` runs on the calling thread with a shutdown error.
    ///
    /// Name resolution runs on the calling thread: instant for "localhost" and IP literals, a DNS
    /// lookup otherwise, so do not call this from an event loop with a host that needs DNS.
    public static func connect(host: String, port: Int, on loop: EventLoop, timeout: Duration = .seconds(10),
                               completion: @escaping @Sendable (Result<Connection, IOError>) -> Void)
    {
        let addresses: [SocketAddress]
        do {
            addresses = try Sys.resolve(host: host, port: port, passive: false)
        } catch {
            if !loop.execute({ completion(.failure(error)) }) { completion(.failure(error)) }
            return
        }
        let submitted = loop.execute {
            let attempt = ConnectAttempt(loop: loop, addresses: addresses, completion: completion)
            attempt.begin(timeout: timeout)
        }
        if !submitted {
            completion(.failure(.shutdown("connect")))
        }
    }

    /// Async form of ``connect(host:port:on:timeout:completion:)``. The returned connection is not
    /// started: call ``start(delegate:options:)`` on its loop.
    public static func connect(host: String, port: Int, on loop: EventLoop,
                               timeout: Duration = .seconds(10)) async throws(IOError) -> Connection
    {
        typealias Outcome = Result<Connection, IOError>
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            connect(host: host, port: port, on: loop, timeout: timeout) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }
}

/// One non-blocking connect in progress: registered for writability, which is how the kernel says
/// the handshake finished (then `SO_ERROR` says how). Lives on its loop.
final class ConnectAttempt: IOHandler {
    private let loop: EventLoop
    private let addresses: [SocketAddress]
    private var nextAddress = 0
    private var current: SocketAddress?
    private var fd: Int32 = -1
    private var registration: IORegistration?
    private var timer: TimerHandle?
    private var completion: (@Sendable (Result<Connection, IOError>) -> Void)?
    private var lastError: IOError?

    init(loop: EventLoop, addresses: [SocketAddress],
         completion: @escaping @Sendable (Result<Connection, IOError>) -> Void)
    {
        self.loop = loop
        self.addresses = addresses
        self.completion = completion
    }

    func begin(timeout: Duration) {
        timer = loop.scheduleTimer(after: timeout) { [self] in
            timer = nil
            let target = current?.description ?? addresses.first?.description
            abandonSocket()
            finish(.failure(IOError(errno: Sys.ETIMEDOUT_, function: "connect",
                                    detail: "\(target ?? "?") not reached within \(timeout)")))
        }
        tryNextAddress()
    }

    private func tryNextAddress() {
        while completion != nil && nextAddress < addresses.count {
            let address = addresses[nextAddress]
            nextAddress += 1
            current = address
            do {
                let (socket, connected) = try Sys.startConnect(to: address)
                fd = socket
                if connected {
                    succeed()
                } else {
                    registration = try loop.register(socket, interest: .write, handler: self)
                }
                return
            } catch {
                lastError = error
                abandonSocket()
            }
        }
        finish(.failure(lastError ?? IOError(errno: Sys.ECONNREFUSED_, function: "connect")))
    }

    private func abandonSocket() {
        if let registration {
            loop.deregister(registration)
            self.registration = nil
        }
        if fd >= 0 {
            Sys.close(fd)
            fd = -1
        }
    }

    private func succeed() {
        if let registration {
            loop.deregister(registration)
            self.registration = nil
        }
        let socket = fd
        fd = -1
        // Small frames must not wait for Nagle's algorithm; failure here only costs latency.
        try? Sys.setNoDelay(socket)
        finish(.success(Connection(adopting: socket, on: loop)))
    }

    private func finish(_ result: Result<Connection, IOError>) {
        if let timer {
            loop.cancelTimer(timer)
            self.timer = nil
        }
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }

    func writable() {
        guard fd >= 0 else { return }
        if let error = Sys.pendingSocketError(fd) {
            lastError = IOError(errno: error.errno, function: "connect", detail: current?.description)
            abandonSocket()
            tryNextAddress()
        } else {
            succeed()
        }
    }

    func readable() {}

    func hangup() {
        writable()
    }

    func eventLoopStopping() {
        registration = nil
        abandonSocket()
        finish(.failure(.shutdown("connect")))
    }
}
