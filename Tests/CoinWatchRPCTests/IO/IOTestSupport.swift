import CoinWatchRPC
import CoinWatchMetrics
import Glibc
import Synchronization
import Testing

/// A value shared between a loop thread and the test.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>

    init(_ value: Value) {
        state = Mutex(value)
    }

    var value: Value { state.withLock { $0 } }

    func update<R>(_ body: (inout Value) -> R) -> R {
        state.withLock { body(&$0) }
    }
}

/// Runs `body` on `loop` and returns its result.
func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let accepted = loop.execute { continuation.resume(returning: body()) }
        precondition(accepted, "loop already stopped")
    }
}

/// Deterministic bytes for payloads.
func pattern(count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7) }
}

/// Echoes every frame back as a frame.
final class EchoDelegate: ConnectionDelegate {
    let closed: Shared<Int>?

    init(closed: Shared<Int>? = nil) {
        self.closed = closed
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        connection.enqueueFrame(body: body)
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        closed?.update { $0 += 1 }
    }
}

/// What a collecting delegate saw.
struct Observed: Sendable {
    var frames: [[UInt8]] = []
    var decodingErrors: [FrameError] = []
    var writability: [Bool] = []
    var inputEnded = 0
    var closed = 0
    var closeError: IOError?
}

/// Records every callback into a `Shared<Observed>`.
final class CollectingDelegate: ConnectionDelegate {
    let observed: Shared<Observed>
    let closeOnInputEnd: Bool

    init(_ observed: Shared<Observed>, closeOnInputEnd: Bool = true) {
        self.observed = observed
        self.closeOnInputEnd = closeOnInputEnd
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        let frame = Array(body)
        observed.update { $0.frames.append(frame) }
    }

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        observed.update { $0.decodingErrors.append(error) }
    }

    func writabilityChanged(_ isWritable: Bool, on connection: Connection) {
        observed.update { $0.writability.append(isWritable) }
    }

    func inputEnded(on connection: Connection) {
        observed.update { $0.inputEnded += 1 }
        if closeOnInputEnd { connection.close(afterFlush: .seconds(5)) }
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        observed.update {
            $0.closed += 1
            $0.closeError = error
        }
    }
}

/// A server on loopback port 0 whose accepted connections get a delegate from `makeDelegate`.
struct TestServer {
    let group: EventLoopGroup
    let listener: ListeningSocket

    init(threads: Int = 1, options: ConnectionOptions = ConnectionOptions(),
         makeDelegate: @escaping @Sendable () -> any ConnectionDelegate) throws
    {
        group = try EventLoopGroup(threads: threads, namePrefix: "test-srv")
        listener = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.start(delegate: makeDelegate(), options: options)
        }
    }

    var port: Int { listener.port }

    func shutdown() async {
        listener.close()
        await group.shutdownGracefully()
    }
}

/// Connects to the test server and starts the connection with `delegate` on `loop`.
func connectStarted(host: String = "127.0.0.1", port: Int, on loop: EventLoop,
                    options: ConnectionOptions = ConnectionOptions(),
                    delegate: @escaping @Sendable () -> any ConnectionDelegate) async throws -> Connection
{
    // A generous connect timeout: with the whole suite running in parallel on two
    // cores, an accept loop can be starved long enough for SYN retransmits.
    let connection = try await Connection.connect(host: host, port: port, on: loop, timeout: .seconds(60))
    await onLoop(loop) { connection.start(delegate: delegate(), options: options) }
    return connection
}

/// Resident set size of this process (what `/metrics` reports as `process_resident_memory_bytes`).
func residentBytes() -> Int {
    ProcessMetrics.residentBytes() ?? 0
}
