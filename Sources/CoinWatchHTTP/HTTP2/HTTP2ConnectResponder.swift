import CoinWatchConnect
import CoinWatchRPC

/// A Connect call's answer on one HTTP/2 stream: a complete response, or a streamed body of envelopes ended
/// by the last DATA frame (Connect has no trailers). The bytes wait in the stream's pending body for the
/// client's window, as gRPC's do, under the same bounds. Loop-confined.
///
/// Weak references: the stream holds the call's sink, which holds this responder, and a call may outlive its
/// stream and connection (an answer still on its way from another thread); what comes after is dropped.
final class HTTP2ConnectResponder: ConnectHTTPResponder {
    private weak var connection: HTTP2Connection?
    private weak var stream: HTTP2Stream?

    init(connection: HTTP2Connection, stream: HTTP2Stream) {
        self.connection = connection
        self.stream = stream
    }

    func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
        guard let connection, let stream else { return }
        // The body waits in the stream for the client's window: it is copied.
        connection.respondWhole(stream, status: status, headers: [("content-type", contentType)] + headers, body: Array(body))
    }

    func startStream(status: Int, headers: [(name: String, value: String)]) {
        guard let connection, let stream, !stream.responseStarted, !stream.isClosed else { return }
        stream.responseStarted = true
        let fields = [(name: ":status", value: String(status))] + headers.map { (name: $0.name.lowercased(), value: $0.value) }
        _ = connection.session.respond(streamID: stream.id, headers: fields, body: true)
        connection.scheduleFlush()
    }

    func stream(_ bytes: [UInt8]) {
        guard let connection, let stream, stream.responseStarted, !stream.isClosed, !stream.bodyEnded else { return }
        stream.pending.append(contentsOf: bytes)
        if stream.pendingCount > connection.configuration.http2.streamHighWatermark { stream.reportedWritable = false }
        connection.wake(stream)
    }

    func finish() {
        guard let connection, let stream, stream.responseStarted, !stream.isClosed, !stream.bodyEnded else { return }
        stream.bodyEnded = true
        connection.wake(stream)
    }

    /// As for a gRPC stream: the connection under its high watermark, the stream's queue under its bound, and
    /// window granted for what is queued.
    var isWritable: Bool {
        guard let connection, let stream else { return false }
        let writable = !stream.isClosed && connection.connection.isWritable
            && stream.pendingCount <= connection.configuration.http2.streamHighWatermark
            && (stream.pendingCount == 0 || connection.session.remoteWindow(streamID: stream.id) > 0)
        if !writable { stream.reportedWritable = false }
        return writable
    }

    var queuedBytes: Int {
        guard let connection, let stream else { return 0 }
        return stream.pendingCount + connection.connection.queuedBytes
    }
}
