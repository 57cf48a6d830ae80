import CoinWatchMetrics
import Synchronization

/// One way into the server (`native` frames, `grpc`, …) as the dispatcher counts its calls: per-loop call
/// metrics, reported with a `transport` label.
package final class CallTransport: Sendable {
    package let name: String
    /// Indexed like the server's event loops.
    let loopMetrics: [LoopCallMetrics]
    private let loops: [ObjectIdentifier]

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

/// The connections of one wire protocol (`native`, `http1`, `http2`): open now and accepted since start.
/// Connections come and go far less often than calls, so plain shared atomics do.
package final class ConnectionCount: Sendable {
    package let name: String
    let open = Atomic<Int>(0)
    let accepted = Atomic<Int>(0)

    init(name: String) {
        self.name = name
    }

    /// A connection known to speak this protocol opened.
    package func opened() {
        accepted.add(1, ordering: .relaxed)
        open.add(1, ordering: .relaxed)
    }

    package func closed() {
        open.subtract(1, ordering: .relaxed)
    }

    package var openCount: Int { open.load(ordering: .relaxed) }
}
