/// What every delegate of a ``Connection`` hears, whichever way its input is delivered; every method
/// is called on the connection's loop.
///
/// The connection holds its delegate strongly until it has reported ``connectionClosed(_:error:)``,
/// then lets it go, so a delegate may keep a strong reference to its connection without leaking.
public protocol ConnectionEventDelegate: AnyObject {
    /// Queued output rose above the high watermark (`false`) or fell to the low watermark (`true`).
    /// Producers that can wait (streams) should pause while not writable.
    func writabilityChanged(_ isWritable: Bool, on connection: Connection)

    /// The peer closed its sending side (end of file); no more input will arrive. Output still
    /// works. The default closes the connection once queued output is flushed.
    func inputEnded(on connection: Connection)

    /// The connection is closed and its descriptor released; reported exactly once. `error` is nil
    /// for an orderly close (local request, or the peer's end of file).
    func connectionClosed(_ connection: Connection, error: IOError?)

    /// The connection's transform (TLS) finished its handshake; `applicationProtocol` is what it negotiated
    /// (ALPN), a hint to the protocol that follows. Called before any decoded input is delivered, so a
    /// delegate may still switch to byte-stream mode here.
    func transformEstablished(applicationProtocol: String?, on connection: Connection)
}

extension ConnectionEventDelegate {
    public func writabilityChanged(_ isWritable: Bool, on connection: Connection) {}

    public func inputEnded(on connection: Connection) {
        connection.close(afterFlush: Connection.defaultCloseTimeout)
    }

    public func connectionClosed(_ connection: Connection, error: IOError?) {}

    public func transformEstablished(applicationProtocol: String?, on connection: Connection) {}
}

/// The delegate of a connection in frame mode (``Connection/start(delegate:options:)``): input is split
/// into the protocol's length-prefixed frames before it is delivered.
public protocol ConnectionDelegate: ConnectionEventDelegate {
    /// A complete frame body arrived. `body` points into the loop's read buffer (or the decoder's
    /// buffer for a frame that spanned reads) and is valid only during this call: decode or copy it.
    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection)

    /// The input could not be split into frames (zero or oversized length, or an HTTP request).
    /// Reading has stopped. The delegate may queue a last reply; unless it closes the connection
    /// itself, the connection is closed after that reply is flushed (``Connection/close(afterFlush:)``).
    ///
    /// A delegate that recognises the input as another protocol (an HTTP request, a TLS handshake)
    /// may instead call ``Connection/switchToByteStream(_:)`` from here: the connection then stays
    /// open and replays every byte it has read so far to the new delegate.
    func frameDecodingFailed(_ error: FrameError, on connection: Connection)
}

extension ConnectionDelegate {
    public func frameDecodingFailed(_ error: FrameError, on connection: Connection) {}
}

/// The delegate of a connection in byte-stream mode (``Connection/start(streamDelegate:options:)`` or
/// ``Connection/switchToByteStream(_:)``): input is delivered as read, for protocols with framing of
/// their own (HTTP/1.1, HTTP/2, WebSocket, TLS records).
public protocol ByteStreamDelegate: ConnectionEventDelegate {
    /// Bytes arrived. `bytes` points into the loop's read buffer (or a replay buffer) and is valid
    /// only during this call: parse or copy it. Never called with an empty buffer.
    func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection)
}

/// Per-connection limits.
public struct ConnectionOptions: Sendable, Hashable {
    /// Largest frame body accepted from the peer.
    public var maxFrameBytes: Int
    /// Queued output above which the delegate is told the connection is not writable.
    public var highWatermark: Int
    /// Queued output at or below which it is told the connection is writable again.
    public var lowWatermark: Int
    /// How long ``Connection/close(afterFlush:)`` waits when the connection closes itself after a
    /// decoding error.
    public var closeTimeout: Duration

    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes, highWatermark: Int = 256 * 1024,
                lowWatermark: Int = 64 * 1024, closeTimeout: Duration = Connection.defaultCloseTimeout) {
        precondition(lowWatermark <= highWatermark, "lowWatermark must not exceed highWatermark")
        self.maxFrameBytes = maxFrameBytes
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
        self.closeTimeout = closeTimeout
    }
}
