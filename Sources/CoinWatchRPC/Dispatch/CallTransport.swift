import CoinWatchMetrics
import Synchronization

/// One way into the server (`native` frames, `grpc`, …) as the dispatcher counts it: its per-loop call
/// metrics and its connection counts, reported with a `transport` label.
package final class CallTransport: Sendable {
    package let name: String
    /// Indexed like the server's event loops.
    let loopMetrics: [LoopCallMetrics]
    private let loops: [ObjectIdentifier]
    let openConnections = Atomic<Int>(0)
    let acceptedConnections = Atomic<Int>(0)

    init(name: String, loops: [EventLoop], methodCount: Int, layout: HistogramLayout) {
        self.name = name
        self.loops = loops.map { ObjectIdentifier($0) }
        self.loopMetrics = loops.map { _ in LoopCallMetrics(methodCount: methodCount, layout: layout) }
    }

    /// The metrics `loop` writes for this transport. Look it up once per connection, not per call.
    package func metrics(for loop: EventLoop) -> LoopCallMetrics {
        let id = ObjectIdentifier(loop)
        guard let index = loops.firstIndex(of: id) else {
            preconditionFailure("event loop \(loop.name) does not belong to this server")
        }
        return loopMetrics[index]
    }

    /// A connection of this transport opened (counted when the connection is known to speak it).
    package func connectionOpened() {
        acceptedConnections.add(1, ordering: .relaxed)
        openConnections.add(1, ordering: .relaxed)
    }

    package func connectionClosed() {
        openConnections.subtract(1, ordering: .relaxed)
    }

    package var openConnectionCount: Int { openConnections.load(ordering: .relaxed) }

    /// Calls started through this transport, all methods and loops.
    var startedCalls: Int {
        var total: UInt64 = 0
        for metrics in loopMetrics {
            for method in 0..<(metrics.cells.count / metrics.stride) {
                total &+= metrics.load(method, LoopCallMetrics.started)
            }
        }
        return Int(truncatingIfNeeded: total)
    }
}
