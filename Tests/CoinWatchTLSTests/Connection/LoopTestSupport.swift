import CoinWatchRPC
import CoinWatchTLS
import CoinWatchTestSupport
import Synchronization

/// What a test delegate saw, shared between the loop and the test.
final class Record: Sendable {
    struct Seen: Sendable {
        var bytes: [UInt8] = []
        var frames: [[UInt8]] = []
        var established: [String?] = []
        var inputEnded = 0
        var closed = 0
        var closeError: IOError?
        var peerIdentity: String?
        /// The connection, once established (for tests that act on the other end).
        var connection: Connection?
    }

    private let seen = Mutex(Seen())

    var value: Seen { seen.withLock { $0 } }

    func update(_ body: (inout Seen) -> Void) {
        seen.withLock { body(&$0) }
    }

    /// Waits (bounded, polling) until `condition` holds for what was seen.
    func wait(timeout: Duration = .seconds(60), until condition: (Seen) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(value) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(value)
    }
}

/// A delegate for either mode: records bytes or frames, optionally echoing them, and every event.
final class RecordingDelegate: ConnectionDelegate, ByteStreamDelegate {
    let record: Record
    let echo: Bool
    /// Once the transform is established, switch to byte-stream mode (for a server delegate that started in
    /// frame mode to recognise the handshake).
    let bytesAfterHandshake: Bool
    /// Server side: start TLS with this context when the decoder recognises a handshake.
    let serverContext: TLSContext?
    let handshakeTimeout: Duration
    /// Stop reading once the handshake is done (a peer that does not keep up).
    let pauseAfterHandshake: Bool
    /// Pause input again after every frame (a server whose output stays above its high watermark).
    let pauseAfterEachFrame: Bool

    init(
        _ record: Record, echo: Bool = false, bytesAfterHandshake: Bool = false, serverContext: TLSContext? = nil,
        handshakeTimeout: Duration = .seconds(60), pauseAfterHandshake: Bool = false, pauseAfterEachFrame: Bool = false
    ) {
        self.record = record
        self.echo = echo
        self.bytesAfterHandshake = bytesAfterHandshake
        self.serverContext = serverContext
        self.handshakeTimeout = handshakeTimeout
        self.pauseAfterHandshake = pauseAfterHandshake
        self.pauseAfterEachFrame = pauseAfterEachFrame
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        let frame = Array(body)
        record.update { $0.frames.append(frame) }
        if echo { connection.enqueueFrame(body: body) }
        if pauseAfterEachFrame { connection.pauseInput() }
    }

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        guard error.code == .tlsHandshake, let serverContext, let session = try? serverContext.makeSession() else { return }
        connection.startTransform(TLSTransform(session: session), handshakeTimeout: handshakeTimeout)
    }

    func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        let copy = Array(bytes)
        record.update { $0.bytes += copy }
        if echo { connection.enqueue(bytes) }
    }

    func transformEstablished(applicationProtocol: String?, on connection: Connection) {
        let identity = connection.transform?.peerIdentity
        record.update {
            $0.established.append(applicationProtocol)
            $0.peerIdentity = identity
            $0.connection = connection
        }
        if bytesAfterHandshake { connection.switchToByteStream(self) }
        if pauseAfterHandshake { connection.pauseInput() }
    }

    func inputEnded(on connection: Connection) {
        record.update { $0.inputEnded += 1 }
        connection.close(afterFlush: .seconds(10))
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        record.update {
            $0.closed += 1
            $0.closeError = error
        }
    }
}

/// Runs `body` on `loop` and waits for it.
func onLoop(_ loop: EventLoop, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        if !loop.execute({
            body()
            continuation.resume()
        }) {
            continuation.resume()
        }
    }
}

/// A loopback listener whose accepted connections start with a delegate from `makeDelegate`, in frame mode
/// unless `bytes`; with `transform`, TLS is put on each accepted connection before it starts.
struct LoopbackServer {
    let group: EventLoopGroup
    let listener: ListeningSocket

    init(
        bytes: Bool = false, transform: (@Sendable () throws -> any ConnectionTransform)? = nil,
        handshakeTimeout: Duration = .seconds(60), options: ConnectionOptions = ConnectionOptions(),
        makeDelegate: @escaping @Sendable () -> RecordingDelegate
    ) throws {
        group = try EventLoopGroup(threads: 1, namePrefix: "tls-test-srv")
        listener = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { connection in
            if let transform, let made = try? transform() {
                connection.startTransform(made, handshakeTimeout: handshakeTimeout)
            }
            if bytes {
                connection.start(streamDelegate: makeDelegate(), options: options)
            } else {
                connection.start(delegate: makeDelegate(), options: options)
            }
        }
    }

    var port: Int { listener.port }

    func shutdown() async {
        listener.close()
        await group.shutdownGracefully()
    }
}

extension TLSContext {
    /// `connect` with timeouts a busy machine cannot exhaust (tests that time out on purpose set their own).
    @discardableResult
    func connectPatiently(
        host: String = "localhost", port: Int, on loop: EventLoop, serverName: String? = nil,
        start: @escaping @Sendable (Connection) -> Void
    ) async throws -> Connection {
        try await connect(
            host: host, port: port, on: loop, serverName: serverName, timeout: .seconds(60),
            handshakeTimeout: .seconds(60), start: start)
    }
}
