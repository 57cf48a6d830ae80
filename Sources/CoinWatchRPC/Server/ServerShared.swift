import CoinWatchCore
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
    /// The methods in a fixed order, and their paths as bytes at the same indices, for
    /// lookup straight from a frame: comparing bytes at an index touches no reference
    /// counts, where walking an array of `RPCMethod`s would retain each closure.
    let methodList: [RPCMethod]
    private let methodPaths: [[UInt8]]
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
        self.methodList = table.keys.sorted().map { table[$0]! }
        self.methodPaths = methodList.map { Array($0.path.utf8) }
        self.welcome = V1.Welcome(
            protocolVersion: RPCProtocol.version, serverName: configuration.serverName,
            serverVersion: configuration.serverVersion, maxFrameBytes: UInt32(clamping: configuration.maxFrameBytes),
            maxConcurrentCalls: UInt32(clamping: configuration.maxConcurrentCallsPerConnection),
            idleTimeoutMs: UInt32(clamping: configuration.idleTimeout.inMilliseconds),
            methods: table.keys.sorted())
        self.logger = logger
        self.group = group
        self.tables = group.loops.map { LoopConnections(loop: $0) }
    }

    /// The index in `methodList` of the method whose path is `bytes`, without making a String.
    func methodIndex(path bytes: UnsafeRawBufferPointer) -> Int? {
        for index in methodPaths.indices where methodPaths[index].count == bytes.count {
            let equal = methodPaths[index].withUnsafeBytes { path in
                bytes.isEmpty || memcmp(path.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            if equal { return index }
        }
        return nil
    }

    var stats: ServerStats {
        var stats = counters.snapshot
        stats.startedCalls += tables.reduce(0) { $0 + $1.startedCalls.load(ordering: .relaxed) }
        return stats
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

/// The open connections of one loop, and the loop's share of the call counter.
final class LoopConnections: @unchecked Sendable {
    // @unchecked Sendable: `connections` is read and written only on `loop`'s
    // thread (accept, close and shutdown all run as jobs on that loop);
    // `startedCalls` is atomic.
    let loop: EventLoop
    var connections: [ObjectIdentifier: ServerConnection] = [:]
    /// Calls started on this loop. Counted per loop rather than in `ServerCounters`:
    /// one counter written by every loop for every call bounced its cache line
    /// between cores.
    let startedCalls = Atomic<Int>(0)
    /// Keeps the counter off the cache line of the next loop's table.
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    init(loop: EventLoop) {
        self.loop = loop
    }
}
