/// A connected TCP socket on one event loop: frames (or raw bytes) in, queued bytes out.
///
/// Input is read into the loop's shared read buffer. In frame mode it is split by a ``FrameDecoder``
/// and each complete frame body goes to the ``ConnectionDelegate`` without a copy; in byte-stream
/// mode (``start(streamDelegate:options:)``, or ``switchToByteStream(_:)`` once the first bytes show
/// another protocol) each read goes to the ``ByteStreamDelegate`` as it is. Output is queued (see
/// ``enqueue(_:)`` and friends) and written by the loop at the end of the
/// current iteration, so everything queued in one iteration leaves in one `sendmsg`.
///
/// Lifecycle: created around a connected descriptor (accepted by a ``ListeningSocket`` or
/// connected with ``connect(host:port:on:timeout:completion:)``), it does nothing until
/// ``start(delegate:options:)``; it ends with exactly one ``ConnectionDelegate/connectionClosed(_:error:)``
/// and exactly one `close(2)` of its descriptor.
///
/// ## Threading
/// Every method must be called on ``eventLoop`` (checked in debug builds). The type is `Sendable` so
/// that it can be handed to another thread and back, not so it can be used there: from elsewhere,
/// go through `connection.eventLoop.execute { ... }`.
public final class Connection: IOHandler, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is read and written only on `eventLoop`'s thread
    // (asserted in debug builds); `eventLoop` itself is immutable and Sendable.

    enum State {
        /// Created, not yet started: not registered, nothing read.
        case idle
        case open
        /// `close(afterFlush:)` was called: output is drained, then FIN, then wait for the peer's EOF.
        case closing
        case closed
    }

    /// How long a close after flush waits by default before giving up and closing anyway.
    public static let defaultCloseTimeout: Duration = .seconds(5)

    /// The loop this connection lives on for its whole life.
    public let eventLoop: EventLoop

    var fd: Int32
    var registration: IORegistration?
    var state = State.idle
    /// The descriptor is being read (no end-of-file yet). While closing, input is read and discarded.
    var readingInput = true
    /// Reading paused by the user (input backpressure), independent of `readingInput`.
    var inputPaused = false
    /// Frames already read but not yet delivered because input was paused in the middle of a read: delivered,
    /// in order, before anything read later. At most one read's worth (the loop's read buffer, or what one
    /// read's TLS records decrypt to), so a peer that pipelines requests and never reads its answers cannot make
    /// the connection answer, and queue, more than that past its high watermark.
    var heldInput: [UInt8] = []
    /// Inside `deliverHeldInput()`, whose bytes go ahead of anything held after them.
    var isDeliveringHeldInput = false
    /// The input ended (a TLS `close_notify`) behind held frames: the delegate hears of the end after them.
    var inputEndHeld = false
    /// Input is handed to the delegate (not after a decoding error, nor while closing).
    var deliveringInput = true
    /// Inside the frame-delivery loop, where the decoder's buffer may be in the delegate's hands.
    var isDelivering = false
    /// `shutdown(SHUT_WR)` was sent (closing, all output written).
    var outputShutDown = false
    /// The socket buffer is full: EPOLLOUT is armed and writes wait for `writable()`.
    var writeBlocked = false
    /// Listed in the loop's flush queue for the end of this iteration.
    var inFlushQueue = false
    var decoder = FrameDecoder()
    var output = OutboundQueue()
    /// The delegate in frame mode; nil in byte-stream mode.
    var delegate: (any ConnectionDelegate)?
    /// The delegate in byte-stream mode; nil in frame mode. Exactly one of the two is set while open.
    var streamDelegate: (any ByteStreamDelegate)?
    var options = ConnectionOptions()
    var closeTimer: TimerHandle?
    /// The transform (TLS) between the socket and the protocol, if one was started.
    public internal(set) var transform: (any ConnectionTransform)?
    /// What else a transform needs: its encoded output, handshake timer and progress; nil without one, so a
    /// plain connection carries one pointer for it.
    var transformState: TransformState?
    /// The error to report when a close that began for a reason (a transform failure) finishes.
    var closeReason: IOError?

    /// False while queued output is above the high watermark (until it drains to the low one).
    public internal(set) var isWritable = true

    /// Wraps a connected, non-blocking descriptor, which the connection now owns (it closes it).
    /// Call ``start(delegate:options:)`` on `loop` to begin reading.
    public init(adopting fd: Int32, on loop: EventLoop) {
        precondition(fd >= 0, "invalid descriptor")
        self.fd = fd
        eventLoop = loop
    }

    deinit {
        // Only reachable for a connection that was never started (a started one is kept alive by
        // its registration until it closes).
        if fd >= 0 { Sys.close(fd) }
    }

    /// Registers with the loop and starts reading. Call once, on the loop.
    public func start(delegate: any ConnectionDelegate, options: ConnectionOptions = ConnectionOptions()) {
        eventLoop.preconditionInEventLoop()
        guard state == .idle else {
            preconditionFailure("Connection.start called twice or after close")
        }
        self.delegate = delegate
        self.options = options
        decoder = FrameDecoder(maxFrameBytes: options.maxFrameBytes)
        register()
    }

    /// Registers with the loop and starts reading in byte-stream mode: every read goes to `delegate`
    /// as it is (`options.maxFrameBytes` is not used). Call once, on the loop.
    public func start(streamDelegate delegate: any ByteStreamDelegate, options: ConnectionOptions = ConnectionOptions()) {
        eventLoop.preconditionInEventLoop()
        guard state == .idle else {
            preconditionFailure("Connection.start called twice or after close")
        }
        self.streamDelegate = delegate
        self.options = options
        register()
    }

    private func register() {
        state = .open
        do {
            registration = try eventLoop.register(fd, interest: .read, handler: self)
        } catch {
            finishClose(error: error)
            return
        }
        if transform != nil { beginTransform() }
    }

    /// True between `start` and the beginning of a close.
    public var isOpen: Bool { state == .open }

    /// True once the connection is closed and its descriptor released.
    public var isClosed: Bool { state == .closed }

    /// Output queued and not yet accepted by the kernel (with a transform: plain output not yet encoded plus
    /// encoded output not yet sent).
    public var queuedBytes: Int { output.queuedBytes + (transformState?.encoded.queuedBytes ?? 0) }

    /// "host:port" of the peer, or nil if unknown or closed.
    public func peerAddress() -> String? {
        fd >= 0 ? Sys.peerName(fd) : nil
    }

    /// Turns TCP keepalive probes on or off, so a peer that vanished without a FIN (power loss, NAT
    /// timeout) is eventually detected even on an idle connection.
    public func setKeepAlive(_ on: Bool) throws(IOError) {
        eventLoop.assertInEventLoop()
        guard fd >= 0 else { throw IOError(errno: Sys.EBADF_, function: "setsockopt(SO_KEEPALIVE)", detail: "closed") }
        try Sys.setKeepAlive(fd, on)
    }

    // MARK: Closing

    /// Closes now, dropping queued output. The delegate hears ``ConnectionDelegate/connectionClosed(_:error:)``
    /// with a nil error. Idempotent.
    public func close() {
        eventLoop.assertInEventLoop()
        finishClose(error: nil)
    }

    /// Stops delivering input, writes what is queued (a final error frame, say), sends FIN, and
    /// closes once the peer has closed too, or after `timeout` (reported as `ETIMEDOUT`).
    ///
    /// Waiting for the peer's end of file matters: closing a socket with unread input makes the
    /// kernel send a reset, which can destroy the reply before the peer reads it. Output queued
    /// after this call is dropped. Idempotent.
    public func close(afterFlush timeout: Duration) {
        eventLoop.assertInEventLoop()
        switch state {
        case .idle:
            finishClose(error: nil)
        case .open:
            state = .closing
            deliveringInput = false
            // Unowned: finishClose cancels this timer, and the loop's registration keeps the
            // connection alive until finishClose; a weak capture would add a side table.
            closeTimer = eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                self.closeTimer = nil
                self.finishClose(error: IOError(errno: Sys.ETIMEDOUT_, function: "close(afterFlush:)",
                                                detail: "peer did not finish within \(timeout)"))
            }
            if transform != nil {
                // The flush sends what is queued, then the transform's goodbye, then comes to beginLingering.
                transformCloseRequested()
            } else if output.isEmpty {
                beginLingering()
            }
        case .closing, .closed:
            return
        }
    }

    /// All output is written: send FIN, then wait for the peer's end of file.
    func beginLingering() {
        guard state == .closing, !outputShutDown else { return }
        // A transform says goodbye in its own protocol first (TLS close_notify); the flush that sends it
        // comes back here.
        if transform != nil, transformSaysGoodbye() { return }
        outputShutDown = true
        Sys.shutdownOutput(fd)
        if !readingInput {
            finishClose(error: nil)
        }
    }

    /// The one place a connection ends: deregisters, closes the descriptor, tells the delegate.
    func finishClose(error: IOError?) {
        guard state != .closed else { return }
        state = .closed
        readingInput = false
        deliveringInput = false
        if let registration {
            eventLoop.deregister(registration)
            self.registration = nil
        }
        if fd >= 0 {
            Sys.close(fd)
            fd = -1
        }
        output.removeAll()
        if !isDelivering {
            decoder.releaseBuffer()
        }
        if let closeTimer {
            eventLoop.cancelTimer(closeTimer)
            self.closeTimer = nil
        }
        if transformState != nil { endTransform() }
        let events = eventDelegate
        delegate = nil
        streamDelegate = nil
        // A close that began for a reason (a transform failure) reports that reason, not how the close ended.
        events?.connectionClosed(self, error: closeReason ?? error)
    }

    /// Whichever delegate is set, for the events both kinds hear.
    var eventDelegate: (any ConnectionEventDelegate)? {
        if let delegate { return delegate }
        return streamDelegate
    }

    /// Stops reading from the socket until `resumeInput()`: input backpressure.
    /// A peer that keeps sending while its replies pile up is thereby held by TCP
    /// flow control instead of growing this process's memory. Loop only.
    public func pauseInput() {
        eventLoop.preconditionInEventLoop()
        guard !inputPaused else { return }
        inputPaused = true
        updateInterest()
    }

    /// Resumes reading after `pauseInput()`. Loop only.
    public func resumeInput() {
        eventLoop.preconditionInEventLoop()
        guard inputPaused else { return }
        inputPaused = false
        updateInterest()
        if !heldInput.isEmpty {
            // Not from here: the caller may be inside a delegate callback. Before the next read either way.
            eventLoop.execute { [self] in deliverHeldInput() }
        }
    }

    /// Whether `pauseInput()` is in effect.
    public var isInputPaused: Bool { inputPaused }

    /// Re-registers the interest set implied by the state (read while reading, write while blocked).
    func updateInterest() {
        guard let registration else { return }
        var interest: IOInterest = []
        if readingInput && !inputPaused { interest.insert(.read) }
        if writeBlocked { interest.insert(.write) }
        do {
            try eventLoop.setInterest(interest, for: registration)
        } catch {
            finishClose(error: error)
        }
    }

    // MARK: IOHandler (called by the event loop, not by users)

    /// Event loop callback: the socket has room again.
    public func writable() {
        guard state == .open || state == .closing else { return }
        writeOut()
    }

    /// Event loop callback: hang-up or socket error.
    public func hangup() {
        guard state == .open || state == .closing else { return }
        if let error = Sys.pendingSocketError(fd) {
            finishClose(error: error)
        } else if readingInput && !inputPaused {
            // Read to the end of file first: data may precede the hang-up.
            readable()
        } else if !output.isEmpty || !(transformState?.encoded.isEmpty ?? true) {
            // The write fails with EPIPE/ECONNRESET and closes with that error.
            writeOut()
        } else {
            finishClose(error: nil)
        }
    }

    /// Event loop callback: the loop is stopping.
    public func eventLoopStopping() {
        registration = nil
        finishClose(error: .shutdown("Connection"))
    }
}
