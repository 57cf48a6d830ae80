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
    let nativeConnections: ConnectionCount
    let welcome: V1.Welcome
    let counters = ServerCounters()
    let logger: Logger
    let group: EventLoopGroup
    /// One table per loop, indexed like `group.loops`.
    let tables: [LoopConnections]
    /// Resumed when the last connection closes during shutdown.
    let drained = Mutex<[CheckedContinuation<Void, Never>]>([])
    /// Serves connections that open with HTTP; nil refuses them.
    let handoff = Mutex<(any ProtocolHandoff)?>(nil)

    init(configuration: RPCServer.Configuration, methods: [RPCMethod], authorizer: (any CallAuthorizer)?, logger: Logger,
         group: EventLoopGroup) {
        self.configuration = configuration
        dispatcher = CallDispatcher(
            methods: methods, maxConcurrentCallsPerConnection: configuration.maxConcurrentCallsPerConnection,
            maxMessageBytes: configuration.maxFrameBytes, authorizer: authorizer, logger: logger, loops: group.loops)
        nativeTransport = dispatcher.transport(Self.nativeTransportName)
        nativeConnections = dispatcher.connections(Self.nativeTransportName)
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

    /// Loop: a freshly accepted connection, on a listener with `tls` (nil: plaintext only).
    func accept(_ connection: Connection, tls: (any ServerTransformFactory)?) {
        counters.acceptedConnections.add(1, ordering: .relaxed)
        let open = counters.openConnections.add(1, ordering: .relaxed).newValue
        let handler = ServerConnection(connection: connection, shared: self, tls: tls)
        nativeConnections.opened()
        connection.start(delegate: handler, options: ConnectionOptions(
            maxFrameBytes: configuration.maxFrameBytes, highWatermark: configuration.highWatermark,
            lowWatermark: configuration.lowWatermark))
        table(for: connection.eventLoop).connections[ObjectIdentifier(handler)] = handler
        if open > configuration.maxConnections {
            counters.rejectedConnections.add(1, ordering: .relaxed)
            handler.refuse(.resourceExhausted, "the server already has \(configuration.maxConnections) connections")
        } else if let refusal = admit(handler) {
            counters.rejectedConnections.add(1, ordering: .relaxed)
            handler.refuse(refusal.code, refusal.message)
        } else if isShuttingDown {
            handler.refuse(.unavailable, "the server is shutting down")
        } else {
            handler.started()
        }
    }

    /// Loop: tracks a connection accepted elsewhere; false when shutting down or full.
    func adopt(_ handler: any ServedConnection) -> Bool {
        guard !isShuttingDown else { return false }
        let open = counters.openConnections.add(1, ordering: .relaxed).newValue
        guard open <= configuration.maxConnections else {
            counters.openConnections.subtract(1, ordering: .relaxed)
            counters.rejectedConnections.add(1, ordering: .relaxed)
            return false
        }
        counters.acceptedConnections.add(1, ordering: .relaxed)
        table(for: handler.eventLoop).connections[ObjectIdentifier(handler)] = handler
        return true
    }

    /// Loop: a native connection turned out to speak another protocol; `handler` serves it from now on and
    /// takes its place in the table (the connection stays counted). Its admission goes with it: the peer's
    /// count is released when `handler` closes, not now, so HTTP connections count against the per-peer limit
    /// like native ones.
    func handedOff(_ native: ServerConnection, to handler: any ServedConnection) {
        let table = table(for: native.eventLoop)
        table.connections.removeValue(forKey: ObjectIdentifier(native))
        table.connections[ObjectIdentifier(handler)] = handler
        nativeConnections.closed()
        if native.isAdmitted {
            native.isAdmitted = false
            table.admittedPeers[ObjectIdentifier(handler)] = native.peer
        }
    }

    /// Asks the configured admission about a new connection; the refusal, or nil once it is admitted.
    private func admit(_ handler: ServerConnection) -> RPCError? {
        guard let admission = configuration.admission else { return nil }
        if let refusal = admission.admit(peer: handler.peer) { return refusal }
        handler.isAdmitted = true
        return nil
    }

    /// Tells the admission a native connection it admitted no longer counts; once per connection.
    private func releaseAdmission(_ handler: ServerConnection) {
        if handler.isAdmitted {
            handler.isAdmitted = false
            configuration.admission?.closed(peer: handler.peer)
        }
    }

    /// Loop: a native connection is gone.
    func connectionClosed(_ handler: ServerConnection) {
        nativeConnections.closed()
        releaseAdmission(handler)
        connectionClosed(served: handler)
    }

    /// Loop: a connection of any protocol is gone.
    func connectionClosed(served handler: any ServedConnection) {
        let table = table(for: handler.eventLoop)
        table.connections.removeValue(forKey: ObjectIdentifier(handler))
        if let peer = table.admittedPeers.removeValue(forKey: ObjectIdentifier(handler)) {
            configuration.admission?.closed(peer: peer)
        }
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

/// The open connections of one loop, whatever protocol they speak.
final class LoopConnections: @unchecked Sendable {
    // @unchecked Sendable: `connections` is read and written only on `loop`'s
    // thread (accept, close and shutdown all run as jobs on that loop).
    let loop: EventLoop
    var connections: [ObjectIdentifier: any ServedConnection] = [:]
    /// The admitted peer of each connection handed to another protocol, released when that connection closes.
    var admittedPeers: [ObjectIdentifier: String] = [:]

    init(loop: EventLoop) {
        self.loop = loop
    }
}
