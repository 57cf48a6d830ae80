import CoinWatchRPC

struct FloodState: Sendable {
    var changes: [Bool] = []
    var queuedAtChange = 0
    var maxQueued = 0
    var sentFrames = 0
    var stopped = false
}

/// Queues one 64 KiB frame per loop iteration until the connection stops being writable (or a
/// frame limit is reached), then stops for good.
final class FloodDelegate: ConnectionDelegate {
    let state: Shared<FloodState>
    let frameLimit: Int
    /// When set, the delegate closes after flush (200 ms) once it stops, and records the close error here.
    let closed: Shared<IOError?>?
    let chunk = SharedBytes(pattern(count: 65_536, seed: 3))
    var sent = 0

    init(state: Shared<FloodState>, frameLimit: Int, closed: Shared<IOError?>? = nil) {
        self.state = state
        self.frameLimit = frameLimit
        self.closed = closed
    }

    func pump(_ connection: Connection) {
        guard connection.isOpen else { return }
        guard connection.isWritable, sent < frameLimit else {
            let sent = self.sent
            state.update {
                $0.sentFrames = sent
                $0.stopped = true
            }
            if closed != nil { connection.close(afterFlush: .milliseconds(200)) }
            return
        }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        connection.enqueueFrame(prefix: empty, payload: chunk, suffix: empty)
        sent += 1
        let queued = connection.queuedBytes
        state.update { $0.maxQueued = max($0.maxQueued, queued) }
        connection.eventLoop.scheduleTimer(after: .zero) { self.pump(connection) }
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {}

    func connectionClosed(_ connection: Connection, error: IOError?) {
        closed?.update { $0 = error }
    }

    func writabilityChanged(_ isWritable: Bool, on connection: Connection) {
        let queued = connection.queuedBytes
        state.update {
            $0.changes.append(isWritable)
            $0.queuedAtChange = queued
        }
    }
}

/// Counts frames without keeping them.
final class CountingDelegate: ConnectionDelegate {
    let count: Shared<Int>

    init(_ count: Shared<Int>) {
        self.count = count
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        count.update { $0 += 1 }
    }
}

/// Closes abruptly on the first frame.
final class CloseOnFrameDelegate: ConnectionDelegate {
    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        connection.close()
    }
}

/// Replies "bye" to the first frame and closes after flushing.
final class ReplyAndCloseDelegate: ConnectionDelegate {
    let observed: Shared<Observed>

    init(_ observed: Shared<Observed>) {
        self.observed = observed
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        guard connection.isOpen else { return }
        Array("bye".utf8).withUnsafeBytes { connection.enqueueFrame(body: $0) }
        connection.close(afterFlush: .seconds(10))
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        observed.update {
            $0.closed += 1
            $0.closeError = error
        }
    }
}

/// Answers an HTTP request line with a plain HTTP 400.
final class HTTPRejectingDelegate: ConnectionDelegate {
    let observed: Shared<Observed>

    init(_ observed: Shared<Observed>) {
        self.observed = observed
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {}

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        observed.update { $0.decodingErrors.append(error) }
        if error.code == .httpRequest {
            connection.enqueue(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        }
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        observed.update {
            $0.closed += 1
            $0.closeError = error
        }
    }
}
