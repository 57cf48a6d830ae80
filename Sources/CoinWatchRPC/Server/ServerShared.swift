import CoinWatchCore
import CoinWatchLogging
import CoinWatchProto
import Synchronization

/// What every connection of a server shares: configuration, the call dispatcher, counters,
/// and the per-loop tables of open connections.
final class ServerShared: Sendable {
    /// The `transport` label of calls on the native protocol.
    static let nativeTransportName = "native"

    let configuration: RPCServer.Configuration
    let dispatcher: CallDispatcher
    let nativeTransport: CallTransport
    let welcome: V1.Welcome
    let counters = ServerCounters()
    let logger: Logger
    let group: EventLoopGroup
    /// One table per loop, indexed like `group.loops`.
    let tables: [LoopConnections]
    /// Resumed when the last connection closes during shutdown.
    let drained = Mutex<[CheckedContinuation<Void, Never>]>([])

    init(configuration: RPCServer.Configuration, methods: [RPCMethod], authorizer: (any CallAuthorizer)?, logger: Logger,
         group: EventLoopGroup) {
        self.configuration = configuration
        dispatcher = CallDispatcher(
            methods: methods, maxConcurrentCallsPerConnection: configuration.maxConcurrentCallsPerConnection,
            maxMessageBytes: configuration.maxFrameBytes, authorizer: authorizer, logger: logger, loops: group.loops)
        nativeTransport = dispatcher.transport(Self.nativeTransportName)
        self.welcome = V1.Welcome(
            protocolVersion: RPCProtocol.version, serverName: configuration.serverName,
            serverVersion: configuration.serverVersion, maxFrameBytes: UInt32(clamping: configuration.maxFrameBytes),
            maxConcurrentCalls: UInt32(clamping: configuration.maxConcurrentCallsPerConnection),
            idleTimeoutMs: UInt32(clamping: configuration.idleTimeout.inMilliseconds),
            methods: dispatcher.methods.allPaths)
        self.logger = logger
        self.group = group
        self.tables = group.loops.map { LoopConnections(loop: $0) }
    }

    var stats: ServerStats {
        var stats = counters.snapshot
        stats.liveCalls = dispatcher.liveCalls.load(ordering: .relaxed)
        stats.startedCalls = dispatcher.transports.reduce(0) { $0 + $1.startedCalls }
        return stats
    }

    var isShuttingDown: Bool { dispatcher.isShuttingDown }

    /// Marks the server as shutting down; true for the first caller only.
    func markShuttingDown() -> Bool {
        dispatcher.markShuttingDown()
    }

    func table(for loop: EventLoop) -> LoopConnections {
        tables.first { $0.loop === loop }!
    }

    /// Loop: a freshly accepted connection.
    func accept(_ connection: Connection) {
        counters.acceptedConnections.add(1, ordering: .relaxed)
        let open = counters.openConnections.add(1, ordering: .relaxed).newValue
        let handler = ServerConnection(connection: connection, shared: self)
        nativeTransport.connectionOpened()
        connection.start(delegate: handler, options: ConnectionOptions(
            maxFrameBytes: configuration.maxFrameBytes, highWatermark: configuration.highWatermark,
            lowWatermark: configuration.lowWatermark))
        table(for: connection.eventLoop).connections[ObjectIdentifier(handler)] = handler
        if open > configuration.maxConnections {
            counters.rejectedConnections.add(1, ordering: .relaxed)
            handler.fail(.resourceExhausted, "the server already has \(configuration.maxConnections) connections")
        } else if isShuttingDown {
            handler.fail(.unavailable, "the server is shutting down")
        } else {
            handler.started()
        }
    }

    /// Loop: a connection is gone.
    func connectionClosed(_ handler: ServerConnection) {
        table(for: handler.eventLoop).connections.removeValue(forKey: ObjectIdentifier(handler))
        nativeTransport.connectionClosed()
        let open = counters.openConnections.subtract(1, ordering: .relaxed).newValue
        if open == 0 && isShuttingDown {
            let waiters = drained.withLock { waiters in
                defer { waiters = [] }
                return waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}

/// The open connections of one loop.
final class LoopConnections: @unchecked Sendable {
    // @unchecked Sendable: `connections` is read and written only on `loop`'s
    // thread (accept, close and shutdown all run as jobs on that loop).
    let loop: EventLoop
    var connections: [ObjectIdentifier: ServerConnection] = [:]

    init(loop: EventLoop) {
        self.loop = loop
    }
}
