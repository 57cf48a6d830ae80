import Synchronization

/// Counters a server keeps about itself, readable from any thread.
///
/// Tests use them to prove that a client's disconnect frees its calls, and
/// operators to see load without a debugger.
public struct ServerStats: Sendable, Hashable {
    /// Connections currently open.
    public var openConnections: Int
    /// Calls started and not yet ended, across connections.
    public var liveCalls: Int
    /// Connections accepted since start.
    public var acceptedConnections: Int
    /// Calls started since start, on every transport.
    public var startedCalls: Int
    /// Connections refused or closed for breaking a limit or the protocol.
    public var rejectedConnections: Int
}

/// The connection atomics behind `ServerStats` (the call counts come from the dispatcher's per-loop metrics).
final class ServerCounters: Sendable {
    let openConnections = Atomic<Int>(0)
    let acceptedConnections = Atomic<Int>(0)
    let rejectedConnections = Atomic<Int>(0)

    var snapshot: ServerStats {
        ServerStats(
            openConnections: openConnections.load(ordering: .relaxed),
            liveCalls: 0,
            acceptedConnections: acceptedConnections.load(ordering: .relaxed),
            startedCalls: 0,
            rejectedConnections: rejectedConnections.load(ordering: .relaxed))
    }
}
