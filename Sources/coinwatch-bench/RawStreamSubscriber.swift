import CoinWatchRPC

/// What a subscriber that speaks another protocol than the native one over a plain connection shares, whatever
/// that protocol: the connection and its request, the deliveries counted exactly as `StreamSubscriber` counts
/// them, and failure when the stream ends before the run does. Subclasses read the bytes (`bytesReceived`).
class RawStreamSubscriber: ByteStreamDelegate, BenchStreamSubscriber, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only on `connection.eventLoop` (delegate calls and `collect`).
    let connection: Connection
    let phase: Phase
    var deliveries = DeliveryRecorder()
    var failed = false

    init(connection: Connection, phase: Phase) {
        self.connection = connection
        self.phase = phase
    }

    /// Starts reading and sends the request; on the connection's loop.
    func start(request: [UInt8]) {
        connection.start(streamDelegate: self)
        connection.enqueue(request)
    }

    func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {}

    /// The stream cannot go on: counted as failed, the connection closed.
    func fail() {
        failed = true
        connection.close()
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        if phase.current != .stopping { failed = true }
    }

    func collect() -> (LatencyHistogram, Int, Bool) { (deliveries.histogram, deliveries.gaps, failed) }

    var eventLoop: EventLoop { connection.eventLoop }

    func stop() { connection.close() }
}
