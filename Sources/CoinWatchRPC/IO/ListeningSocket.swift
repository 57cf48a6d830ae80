/// A TCP listener that accepts on one loop and spreads the new connections over a group.
///
/// Each accepted connection is created on the loop `group.next()` picks, and `onAccept` runs there
/// with it; `onAccept` must call ``Connection/start(delegate:options:)`` (a connection it leaves
/// unstarted is closed).
public final class ListeningSocket: IOHandler, @unchecked Sendable {
    // @unchecked Sendable: `fd`, `registration` and `pauseTimer` are written by the initializer before
    // the registration job is submitted (the inbox lock orders that) and afterwards only on
    // `eventLoop`'s thread; the other properties are immutable.

    /// The port actually bound (useful with port 0).
    public let port: Int
    /// The address actually bound.
    public let localAddress: String
    /// The loop that accepts.
    public let eventLoop: EventLoop
    private let group: EventLoopGroup
    private let onAccept: @Sendable (Connection) -> Void
    private var fd: Int32
    private var registration: IORegistration?
    private var pauseTimer: TimerHandle?

    /// Accepts taken per readiness event before yielding to the loop's other work.
    static let acceptsPerEvent = 256
    /// Pause after running out of descriptors or memory, so the loop does not spin on a listener it
    /// cannot serve.
    static let resourcePause: Duration = .milliseconds(100)

    /// Binds `host:port` (port 0 picks a free port; host "" or "*" for all interfaces), listens,
    /// and starts accepting on a loop of `group`.
    public init(host: String, port: Int, backlog: Int32 = 1024, group: EventLoopGroup,
                onAccept: @escaping @Sendable (Connection) -> Void) throws(IOError)
    {
        let addresses = try Sys.resolve(host: host, port: port, passive: true)
        var lastError: IOError?
        var bound: (fd: Int32, address: SocketAddress)?
        for address in addresses {
            do {
                bound = (try Sys.listen(on: address, backlog: backlog), address)
                break
            } catch {
                lastError = error
            }
        }
        guard let bound else { throw lastError ?? IOError(errno: Sys.EINVAL_, function: "bind") }
        let boundPort: Int
        do {
            boundPort = try Sys.localPort(bound.fd)
        } catch {
            Sys.close(bound.fd)
            throw error
        }
        self.port = boundPort
        fd = bound.fd
        localAddress = Sys.localName(bound.fd) ?? bound.address.description
        eventLoop = group.next()
        self.group = group
        self.onAccept = onAccept
        let submitted = eventLoop.execute { [self] in
            do {
                registration = try eventLoop.register(fd, interest: .read, handler: self)
            } catch {
                closeOnLoop()
            }
        }
        if !submitted {
            Sys.close(fd)
            fd = -1
            throw IOError.shutdown("ListeningSocket")
        }
    }

    /// Stops accepting and closes the socket (asynchronously, on the accepting loop). Connections
    /// already accepted are not affected. Any thread; idempotent.
    public func close() {
        if eventLoop.inEventLoop {
            closeOnLoop()
        } else {
            eventLoop.execute { [self] in closeOnLoop() }
        }
    }

    private func closeOnLoop() {
        if let registration {
            eventLoop.deregister(registration)
            self.registration = nil
        }
        if let pauseTimer {
            eventLoop.cancelTimer(pauseTimer)
            self.pauseTimer = nil
        }
        if fd >= 0 {
            Sys.close(fd)
            fd = -1
        }
    }

    // MARK: IOHandler (called by the event loop, not by users)

    /// Event loop callback: connections are waiting to be accepted.
    public func readable() {
        guard fd >= 0 else { return }
        for _ in 0..<Self.acceptsPerEvent {
            do {
                switch try Sys.accept(fd) {
                case .accepted(let child):
                    handOff(child)
                case .wouldBlock:
                    return
                }
            } catch {
                if error.errno == Sys.EMFILE_ || error.errno == Sys.ENFILE_ || error.errno == Sys.ENOBUFS_
                    || error.errno == Sys.ENOMEM_ {
                    pauseAccepting()
                    return
                }
                // ECONNABORTED, EPROTO, network errors: that one connection failed; keep going.
            }
        }
    }

    private func handOff(_ child: Int32) {
        // Small frames must not wait for Nagle's algorithm; failure here only costs latency.
        try? Sys.setNoDelay(child)
        let target = group.next()
        let onAccept = self.onAccept
        if target === eventLoop {
            Self.adopt(child, on: target, onAccept)
        } else if !target.execute({ Self.adopt(child, on: target, onAccept) }) {
            Sys.close(child)
        }
    }

    private static func adopt(_ fd: Int32, on loop: EventLoop, _ onAccept: (Connection) -> Void) {
        let connection = Connection(adopting: fd, on: loop)
        onAccept(connection)
        if connection.state == .idle {
            connection.close()
        }
    }

    private func pauseAccepting() {
        guard let registration, pauseTimer == nil else { return }
        try? eventLoop.setInterest([], for: registration)
        pauseTimer = eventLoop.scheduleTimer(after: Self.resourcePause) { [weak self] in
            guard let self, let registration = self.registration else { return }
            self.pauseTimer = nil
            try? self.eventLoop.setInterest(.read, for: registration)
        }
    }

    public func writable() {}

    public func hangup() {
        readable()
    }

    public func eventLoopStopping() {
        registration = nil
        closeOnLoop()
    }
}
