import CoinWatchCore
import CoinWatchModel
public import CoinWatchProto
public import CoinWatchRPC
import CoinWatchTLS
import Synchronization

/// The client library for CoinWatch servers.
///
/// One instance holds one connection and shares it between any number of
/// tasks; calls are multiplexed on it. The connection is made on first use and,
/// after a drop (server restart, network, `GoAway`), remade on the next call, so
/// long-lived services can keep one client for their whole life. A stream is not reopened by the next call; for
/// one that resumes by itself, follow it (`followPrices`, `followAlerts`, `follow`).
///
/// ```swift
/// let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: 7878))
/// let settings = try await client.setRule(device: "phone-1", symbol: "BTC", below: ExactDecimal(60_000), above: nil)
/// for try await update in client.streamPrices(symbols: ["BTC"]) { print(update.symbol, update.price) }
/// for await event in client.followPrices(symbols: ["BTC"]) { print(event) }
/// ```
public final class CoinWatchClient: Sendable {
    public let configuration: Configuration
    /// The client's event loop, started by the first connection attempt (see `eventLoop()`).
    private let group = Mutex<EventLoopGroup?>(nil)
    /// The connection, with the index in `configuration.servers` of the server it is to.
    private let current = Mutex<(connection: RPCClientConnection, server: Int)?>(nil)
    /// Serialises connection attempts so concurrent first calls share one connection.
    private let connecting = ConnectGate()
    /// The TLS context, made on the first connection and kept so later connections resume its sessions.
    private let tlsContext = Mutex<TLSContext?>(nil)
    /// The index in `configuration.servers` of the server that answered last.
    private let preferred = Mutex(0)

    /// Creates a client; nothing connects until the first call (or `connect()`).
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    deinit {
        current.withLock { $0?.connection.close() }
        guard let group = group.withLock({ $0 }) else { return }
        if group.loops.contains(where: \.inEventLoop) {
            // The last reference went in a job on the client's own loop (a handler holding the client), and a loop
            // cannot wait for itself to end. Stopped, it finishes that job and exits, and nothing of the client's
            // is left for it to run.
            for loop in group.loops { loop.stop() }
        } else {
            group.syncShutdownGracefully()
        }
    }

    /// The loop connections run on, started on first use so that failing to start it (the process is out of file
    /// descriptors, say) fails that call with UNAVAILABLE instead of trapping in `init`. One loop is plenty for a
    /// client: its work per call is an encode and a write.
    private func eventLoop() throws(RPCError) -> EventLoop {
        try group.withLock { group throws(RPCError) -> EventLoop in
            if let group { return group.next() }
            do {
                let started = try EventLoopGroup(threads: 1, namePrefix: "cw-client")
                group = started
                return started.next()
            } catch {
                throw RPCError(code: .unavailable, message: "cannot start the client's event loop: \(error)")
            }
        }
    }

    /// The connection, connecting (or reconnecting) first when there is no usable one.
    ///
    /// Failing to reach the server throws UNAVAILABLE whose message names the
    /// address; callers that must tell "unreachable" from a failed call can call
    /// this first.
    @discardableResult
    public func connect() async throws(RPCError) -> RPCClientConnection {
        try await connectToServer().connection
    }

    /// `connect()`, also saying which server the connection is to: its index in `configuration.servers`.
    func connectToServer() async throws(RPCError) -> (connection: RPCClientConnection, server: Int) {
        if let current = current.withLock({ $0 }), current.connection.isUsable {
            return current
        }
        return try await connecting.run { () throws(RPCError) -> (connection: RPCClientConnection, server: Int) in
            if let current = self.current.withLock({ $0 }), current.connection.isUsable {
                return current
            }
            var options = RPCClientConnection.Options()
            options.clientName = self.configuration.clientName
            options.authToken = self.configuration.token
            options.connectTimeout = self.configuration.connectTimeout
            options.keepaliveInterval = self.configuration.keepaliveInterval
            options.keepaliveTimeout = self.configuration.keepaliveTimeout
            options.transform = try self.tlsTransforms()
            let servers = self.configuration.servers
            let first = self.preferred.withLock { $0 } % servers.count
            var connected: (connection: RPCClientConnection, server: Int)?
            var failure: RPCError?
            // The server that answered last first, then the others in order.
            for offset in 0..<servers.count {
                let index = (first + offset) % servers.count
                do throws(RPCError) {
                    let made = try await RPCClientConnection.connect(
                        host: servers[index].host, port: servers[index].port, on: try self.eventLoop(), options: options)
                    connected = (made, index)
                    self.preferred.withLock { $0 = index }
                    break
                } catch {
                    // Another server may answer; a refused handshake (bad token) would be refused there too.
                    guard error.code == .unavailable || error.code == .deadlineExceeded else { throw error }
                    failure = error
                }
            }
            guard let connected else {
                throw failure ?? RPCError(code: .unavailable, message: "no server to connect to")
            }
            let previous = self.current.withLock { current in
                defer { current = connected }
                return current
            }
            // Not closed at once: after a GoAway the server is still finishing the calls it accepted on it.
            previous?.connection.closeWhenIdle()
            return connected
        }
    }

    /// A stream on server `index` was lost: the next connection starts with the server after it, so that a follow
    /// moves to another node at once instead of first waiting on the one that went away. Nothing changes when another
    /// task has already moved on.
    func avoid(server index: Int) {
        let count = configuration.servers.count
        preferred.withLock { preferred in
            if preferred == index { preferred = (index + 1) % count }
        }
    }

    /// The TLS of `configuration.tls` for a connection, nil without it; the context is made once.
    ///
    /// - Throws: INVALID_ARGUMENT naming the file or setting `TLSContext` refused.
    private func tlsTransforms() throws(RPCError) -> TLSClientTransforms? {
        guard var tls = configuration.tls else { return nil }
        let context = try tlsContext.withLock { context throws(RPCError) -> TLSContext in
            if let context { return context }
            if tls.applicationProtocols.isEmpty { tls.applicationProtocols = [RPCProtocol.applicationProtocol] }
            do {
                let made = try TLSContext(tls)
                context = made
                return made
            } catch {
                throw RPCError(code: .invalidArgument, message: "cannot set up TLS: \(error)")
            }
        }
        return TLSClientTransforms(context: context, serverName: configuration.tlsServerName)
    }

    /// Closes the connection; a later call reconnects.
    public func close() {
        let connection = current.withLock { current in
            defer { current = nil }
            return current
        }
        connection?.connection.close()
    }

    // MARK: Generic calls

    /// Runs any unary method of the schema.
    ///
    /// A call the server did not start (`RPCError.notProcessed`: refused by its `GoAway`, or held by this client
    /// when the connection ended) is sent again on a new connection, which may be to another of
    /// `configuration.servers`, up to once per server and within the same deadline: the server never ran it, so
    /// this cannot repeat its effect.
    public func call<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, timeout: Duration? = nil,
        metadata: [String: String] = [:]
    ) async throws(RPCError) -> Response {
        let started = ContinuousClock.now
        var sentAgain = 0
        while true {
            do throws(RPCError) {
                return try await callOnce(method, request, timeout: timeout, started: started, metadata: metadata)
            } catch {
                guard error.maySendAgain, sentAgain < configuration.servers.count else {
                    throw error
                }
                sentAgain += 1
            }
        }
    }

    /// One attempt of `call`, its deadline counted from `started`.
    private func callOnce<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, timeout: Duration?, started: ContinuousClock.Instant,
        metadata: [String: String]
    ) async throws(RPCError) -> Response {
        guard let timeout = timeout ?? configuration.defaultTimeout else {
            return try await connect().unary(method, request, metadata: metadata)
        }
        // The deadline covers connecting (and any earlier attempt) too: what is left of it goes to the call.
        let connection = try await connect(within: timeout - (ContinuousClock.now - started), of: timeout)
        let left = timeout - (ContinuousClock.now - started)
        guard left > .zero else { throw Self.deadlineExceeded(timeout, while: "connecting") }
        return try await connection.unary(method, request, timeout: left, metadata: metadata)
    }

    /// `connect()`, given up after `left` (DEADLINE_EXCEEDED naming the call's whole `timeout`): a call's deadline
    /// bounds its wait for a connection, which may take `connectTimeout` per server, or wait behind another task's
    /// attempt. The attempt itself goes on, and a later call can use the connection it makes.
    func connect(within left: Duration, of timeout: Duration) async throws(RPCError) -> RPCClientConnection {
        if let current = current.withLock({ $0 }), current.connection.isUsable { return current.connection }
        guard left > .zero else { throw Self.deadlineExceeded(timeout, while: "connecting") }
        let waiter = FirstOutcome<Result<RPCClientConnection, RPCError>>()
        let result = await withCheckedContinuation { continuation in
            waiter.wait(continuation)
            let timer = Task {
                try? await Task.sleep(for: left)
                guard !Task.isCancelled else { return }
                waiter.resume(.failure(Self.deadlineExceeded(timeout, while: "connecting")))
            }
            Task {
                let outcome: Result<RPCClientConnection, RPCError>
                do throws(RPCError) {
                    outcome = .success(try await self.connect())
                } catch {
                    outcome = .failure(error)
                }
                timer.cancel()
                waiter.resume(outcome)
            }
        }
        return try result.get()
    }

    static func deadlineExceeded(_ timeout: Duration, while doing: String) -> RPCError {
        RPCError(code: .deadlineExceeded, message: "deadline of \(timeout.inMilliseconds) ms exceeded while \(doing)")
    }

    /// Runs any server-streaming method of the schema. Connects lazily; errors,
    /// including failing to connect, arrive through the iteration. A stream the server did not start
    /// (`RPCError.notProcessed`) is started again on a new connection, up to once per configured server, as
    /// `call` does; it had sent nothing, so nothing arrives twice.
    public func stream<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, metadata: [String: String] = [:],
        bufferLimit: Int = 4096
    ) -> RPCResponseStream<Response> {
        // A stream the server did not start is started again on a new connection, as `call` sends a unary call again.
        // The call's end handler keeps this closure for that, in the connection's call table: held strongly, the
        // client would keep itself alive through its own connection while the stream runs (so a caller letting go
        // of it would not end the stream), and its last release could come on its own loop, whose deinit cannot
        // join that loop. A client gone has closed its connection, and so ended the stream.
        RPCResponseStream.start(bufferLimit: bufferLimit, startingAgain: configuration.servers.count) {
            [weak self] onMessage, onEnd throws(RPCError) in
            guard let self else { throw RPCError(code: .unavailable, message: "the client was closed") }
            let connection = try await self.connect()
            let id = connection.startRawStream(
                method: method.path, payload: request.serializedBytes(), metadata: metadata,
                onMessage: onMessage, onEnd: onEnd)
            return { connection.cancel(callID: id) }
        }
    }
}

/// A continuation resumed by whichever of several racers finishes first; the later ones are ignored.
final class FirstOutcome<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

/// Lets one task at a time run a connection attempt; the others wait for it.
final class ConnectGate: Sendable {
    private let lock = Mutex<[CheckedContinuation<Void, Never>]?>(nil)

    func run<T>(_ body: () async throws(RPCError) -> T) async throws(RPCError) -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = lock.withLock { waiters -> Bool in
                if waiters == nil {
                    waiters = []
                    return true
                }
                waiters!.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    private func release() {
        let next = lock.withLock { waiters -> CheckedContinuation<Void, Never>? in
            guard var queue = waiters, !queue.isEmpty else {
                waiters = nil
                return nil
            }
            let first = queue.removeFirst()
            waiters = queue
            return first
        }
        next?.resume()
    }
}
