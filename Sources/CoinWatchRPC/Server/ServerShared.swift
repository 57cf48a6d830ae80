import CoinWatchLogging
import CoinWatchProto
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// What every connection of a server shares: configuration, methods, counters,
/// and the per-loop tables of open connections.
final class ServerShared: Sendable {
    let configuration: RPCServer.Configuration
    let methods: [String: RPCMethod]
    /// The methods with their paths as bytes, for lookup straight from a frame.
    let methodsByBytes: [(path: [UInt8], method: RPCMethod)]
    let welcome: V1.Welcome
    let counters = ServerCounters()
    let logger: Logger
    let group: EventLoopGroup
    /// One table per loop, indexed like `group.loops`.
    let tables: [LoopConnections]
    private let shuttingDown = Atomic<Bool>(false)
    /// Resumed when the last connection closes during shutdown.
    let drained = Mutex<[CheckedContinuation<Void, Never>]>([])

    init(configuration: RPCServer.Configuration, methods: [RPCMethod], logger: Logger, group: EventLoopGroup) {
        self.configuration = configuration
        var table: [String: RPCMethod] = [:]
        for method in methods {
            precondition(table[method.path] == nil, "method \(method.path) registered twice")
            table[method.path] = method
        }
        self.methods = table
        self.methodsByBytes = table.map { (Array($0.key.utf8), $0.value) }
        self.welcome = V1.Welcome(
            protocolVersion: RPCProtocol.version, serverName: configuration.serverName,
            serverVersion: configuration.serverVersion, maxFrameBytes: UInt32(clamping: configuration.maxFrameBytes),
            maxConcurrentCalls: UInt32(clamping: configuration.maxConcurrentCallsPerConnection),
            idleTimeoutMs: UInt32(clamping: ServerConnection.nanoseconds(configuration.idleTimeout) / 1_000_000),
            methods: table.keys.sorted())
        self.logger = logger
        self.group = group
        self.tables = group.loops.map { LoopConnections(loop: $0) }
    }

    /// The method whose path is `bytes`, without making a String.
    func method(path bytes: UnsafeRawBufferPointer) -> RPCMethod? {
        for entry in methodsByBytes where entry.path.count == bytes.count {
            let equal = entry.path.withUnsafeBytes { path in
                bytes.isEmpty || memcmp(path.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            if equal { return entry.method }
        }
        return nil
    }

    var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    /// Marks the server as shutting down; true for the first caller only.
    func markShuttingDown() -> Bool {
        !shuttingDown.exchange(true, ordering: .acquiringAndReleasing)
    }

    func table(for loop: EventLoop) -> LoopConnections {
        tables.first { $0.loop === loop }!
    }

    /// Loop: a freshly accepted connection.
    func accept(_ connection: Connection) {
        counters.acceptedConnections.add(1, ordering: .relaxed)
        let open = counters.openConnections.add(1, ordering: .relaxed).newValue
        let handler = ServerConnection(connection: connection, shared: self)
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
