/// Receives what happens on a ``Connection``; every method is called on the connection's loop.
///
/// The connection holds its delegate strongly until it has reported ``connectionClosed(_:error:)``,
/// then lets it go, so a delegate may keep a strong reference to its connection without leaking.
public protocol ConnectionDelegate: AnyObject {
    /// A complete frame body arrived. `body` points into the loop's read buffer (or the decoder's
    /// buffer for a frame that spanned reads) and is valid only during this call: decode or copy it.
    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection)

    /// The input could not be split into frames (zero or oversized length, or an HTTP request).
    /// Reading has stopped. The delegate may queue a last reply; unless it closes the connection
    /// itself, the connection is closed after that reply is flushed (``Connection/close(afterFlush:)``).
    func frameDecodingFailed(_ error: FrameError, on connection: Connection)

    /// Queued output rose above the high watermark (`false`) or fell to the low watermark (`true`).
    /// Producers that can wait (streams) should pause while not writable.
    func writabilityChanged(_ isWritable: Bool, on connection: Connection)

    /// The peer closed its sending side (end of file); no more frames will arrive. Output still
    /// works. The default closes the connection once queued output is flushed.
    func inputEnded(on connection: Connection)

    /// The connection is closed and its descriptor released; reported exactly once. `error` is nil
    /// for an orderly close (local request, or the peer's end of file).
    func connectionClosed(_ connection: Connection, error: IOError?)
}

extension ConnectionDelegate {
    public func frameDecodingFailed(_ error: FrameError, on connection: Connection) {}

    public func writabilityChanged(_ isWritable: Bool, on connection: Connection) {}

    public func inputEnded(on connection: Connection) {
        connection.close(afterFlush: Connection.defaultCloseTimeout)
    }

    public func connectionClosed(_ connection: Connection, error: IOError?) {}
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
