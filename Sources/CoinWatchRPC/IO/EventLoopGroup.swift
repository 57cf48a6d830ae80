import Synchronization

/// A fixed set of event loops, one thread each; connections are spread over them round-robin.
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let counter = Atomic<Int>(0)

    /// One loop per core this process may use (``ProcessorBudget``): a loop is CPU-bound under
    /// load, so more loops than cores only adds context switches and scheduler waits.
    public static var defaultThreadCount: Int { ProcessorBudget.current().cores }

    /// Starts `threads` loops named "`namePrefix`-0", "`namePrefix`-1", …
    public init(threads: Int = EventLoopGroup.defaultThreadCount, namePrefix: String = "cw-loop") throws(IOError) {
        precondition(threads > 0, "an EventLoopGroup needs at least one thread")
        var loops: [EventLoop] = []
        do {
            for index in 0..<threads {
                loops.append(try EventLoop(name: "\(namePrefix)-\(index)"))
            }
        } catch {
            for loop in loops { loop.syncShutdownGracefully() }
            throw error
        }
        self.loops = loops
    }

    /// The next loop in round-robin order. Any thread.
    public func next() -> EventLoop {
        let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// Stops every loop and waits for all of them. Not from one of the group's loops.
    public func syncShutdownGracefully() {
        for loop in loops { loop.stop() }
        for loop in loops { loop.join() }
    }

    /// Stops every loop and waits for all of them without blocking a thread.
    public func shutdownGracefully() async {
        for loop in loops { loop.stop() }
        for loop in loops { await loop.shutdownGracefully() }
    }
}
