public import CoinWatchLogging
public import CoinWatchMetrics
import Synchronization

/// A CoinWatch RPC server: listens, speaks the protocol on its own event loops,
/// and dispatches calls to the registered methods.
///
/// ```swift
/// let server = try RPCServer(configuration: config, methods: service.methods)
/// try server.start()
/// print("serving on", server.port)
/// await server.shutdownGracefully()
/// ```
public final class RPCServer: Sendable {
    public let configuration: Configuration
    let shared: ServerShared
    private let listener = Mutex<ListeningSocket?>(nil)
    private let boundPort = Atomic<Int>(0)

    /// Creates the server and its event loops; nothing is bound until `start()`.
    ///
    /// - Parameter authorizer: asked before every call of every transport whether it may run; nil allows all.
    public init(
        configuration: Configuration, methods: [RPCMethod], authorizer: (any CallAuthorizer)? = nil,
        logger: Logger = .disabled
    ) throws(IOError) {
        self.configuration = configuration
        let group = try EventLoopGroup(threads: max(1, configuration.eventLoopThreads), namePrefix: "cw-loop")
        shared = ServerShared(configuration: configuration, methods: methods, authorizer: authorizer, logger: logger,
                              group: group)
    }

    /// The dispatcher every transport of this server hands its calls to.
    package var dispatcher: CallDispatcher { shared.dispatcher }

    /// The event loops; services that manage many streams (the price hub) run
    /// their per-loop work on these.
    public var eventLoops: [EventLoop] { shared.group.loops }

    /// Binds and starts accepting. Returns the port actually bound.
    @discardableResult
    public func start() throws(IOError) -> Int {
        let shared = self.shared
        let socket = try ListeningSocket(
            host: configuration.host, port: configuration.port, backlog: 4096, group: shared.group
        ) { connection in
            shared.accept(connection)
        }
        listener.withLock { $0 = socket }
        boundPort.store(socket.port, ordering: .releasing)
        return socket.port
    }

    /// The port bound by `start()` (useful with port 0).
    public var port: Int { boundPort.load(ordering: .acquiring) }

    /// Live counters.
    public var stats: ServerStats { shared.stats }

    /// The server's metrics for a scrape: `grpc_server_*` for every transport, connections by transport.
    public var metrics: any MetricsCollector {
        let dispatcher = shared.dispatcher
        return MetricsClosure { dispatcher.metricFamilies() }
    }

    /// Graceful shutdown, as `docs/PROTOCOL.md` §6 describes: stop accepting, send
    /// every connection `GoAway`, end streams with UNAVAILABLE, give unary calls
    /// the grace period, then close everything and stop the event loops.
    public func shutdownGracefully() async {
        beginShutdown()
        await shared.waitUntilDrained(timeout: configuration.shutdownGracePeriod)
        // Whatever is left after the grace period is closed now.
        forceCloseAll()
        await shared.waitUntilDrained(timeout: .seconds(3))
        await shared.group.shutdownGracefully()
    }

    /// Stops at once: closes every connection without waiting, then the loops.
    public func shutdownNow() async {
        beginShutdown()
        forceCloseAll()
        await shared.waitUntilDrained(timeout: .seconds(2))
        await shared.group.shutdownGracefully()
    }

    private func beginShutdown() {
        guard shared.markShuttingDown() else { return }
        listener.withLock { socket in
            socket?.close()
            socket = nil
        }
        for table in shared.tables {
            table.loop.execute {
                for connection in Array(table.connections.values) { connection.beginDrain() }
            }
        }
    }

    private func forceCloseAll() {
        for table in shared.tables {
            table.loop.execute {
                for connection in Array(table.connections.values) { connection.forceClose() }
            }
        }
    }
}

extension ServerShared {
    /// Returns once no connection is open (or after `timeout`).
    func waitUntilDrained(timeout: Duration? = nil) async {
        if let timeout {
            // Not a task group: a group returns only when all its tasks have, and the drain wait below is a
            // continuation that cancelling does not resume, so the timeout would never end the wait. The drain
            // instead cuts the sleep short; left alone, it ends when the last connection closes.
            let sleep = Task { try? await Task.sleep(for: timeout) }
            Task {
                await self.waitUntilDrained()
                sleep.cancel()
            }
            await sleep.value
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = drained.withLock { waiters -> Bool in
                if counters.openConnections.load(ordering: .acquiring) == 0 { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
