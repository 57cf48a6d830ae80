/// A connection with a transform (TLS): input is decoded before framing or byte delivery, queued output is
/// encoded at flush time, and the transform's handshake is driven by the socket's readiness on the loop — a step
/// that needs the peer's next bytes just waits for them. Plain output stays plain in the queue until the socket
/// can take it, so the watermarks and input pausing work on plain bytes as without a transform, and at most one
/// batch of encoded bytes (`encodeBatchLimit`) waits beside it.
extension Connection {
    /// What a connection keeps for its transform.
    final class TransformState {
        /// Encoded bytes waiting for the socket.
        var encoded = OutboundQueue()
        let handshakeTimeout: Duration
        var handshakeTimer: TimerHandle?
        /// The handshake finished and the delegate was told.
        var established = false
        /// The transform failed: nothing more is encoded or decoded, only what it still has to send goes out.
        var failed = false
        /// The transform's goodbye (close_notify) was asked for.
        var saidGoodbye = false
        /// The peer ended its input inside the transform (close_notify); the delegate was told.
        var inputEnded = false
        /// Started from `frameDecodingFailed`: the bytes read so far are to be replayed into it.
        var replayPending = false

        init(handshakeTimeout: Duration) {
            self.handshakeTimeout = handshakeTimeout
        }
    }

    /// Plain bytes gathered into one encode call: one TLS record's worth (16 KiB, RFC 8446 §5.1).
    static let encodeChunk = 16 * 1024
    /// Encoded bytes prepared before they are written: enough for a few records per `sendmsg`, few enough that
    /// the plain queue, not this one, holds a backlog.
    static let encodeBatchLimit = 64 * 1024

    /// Puts `transform` between the socket and the protocol.
    ///
    /// Call it on a connection that is not started yet (a client: the transform begins when the connection
    /// starts), or from ``ConnectionDelegate/frameDecodingFailed(_:on:)`` when the decoder recognised the
    /// transform's handshake (a server: `FrameError.Code.tlsHandshake`): then every byte read so far goes to the
    /// transform, the connection stays open in frame mode with the same delegate, and what the transform decodes
    /// is framed from its first byte as a new stream. Either way the delegate hears
    /// ``ConnectionEventDelegate/transformEstablished(applicationProtocol:on:)`` once the handshake is done, and
    /// a handshake still unfinished after `handshakeTimeout` closes the connection with `ETIMEDOUT`. Loop only.
    public func startTransform(_ transform: any ConnectionTransform, handshakeTimeout: Duration = .seconds(10)) {
        eventLoop.preconditionInEventLoop()
        precondition(self.transform == nil, "a connection takes one transform")
        let state = TransformState(handshakeTimeout: handshakeTimeout)
        switch self.state {
        case .idle:
            self.transform = transform
            transformState = state
        case .open:
            precondition(isDelivering && !deliveringInput && delegate != nil,
                         "startTransform on an open connection is only for frameDecodingFailed")
            self.transform = transform
            transformState = state
            state.replayPending = true
            beginTransform()
        case .closing, .closed:
            return
        }
    }

    /// Starts the transform and its handshake timer once the connection is open.
    func beginTransform() {
        guard let transform, let transformState else { return }
        let timeout = transformState.handshakeTimeout
        transformState.handshakeTimer = eventLoop.scheduleTimer(after: timeout) { [unowned self] in
            self.transformState?.handshakeTimer = nil
            guard self.state == .open || self.state == .closing, self.transformState?.established == false else { return }
            self.finishClose(error: IOError(errno: Sys.ETIMEDOUT_, function: "TLS handshake",
                                            detail: "not finished within \(timeout)"))
        }
        do {
            try transform.begin()
        } catch {
            failTransform(error)
            return
        }
        collectEncoded(scheduleFlush: true)
    }

    // MARK: Input

    /// Hands bytes read from the socket (`first` then `second`) to the transform, then delivers all it decodes.
    func receiveEncoded(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) {
        guard let transform, let transformState, !transformState.failed else { return }
        do {
            if !first.isEmpty { try transform.receive(first) }
            if !second.isEmpty { try transform.receive(second) }
        } catch {
            failTransform(error)
            return
        }
        drainDecoded(transform, transformState)
    }

    /// Delivers decoded input until the transform needs more, into the loop's read buffer (free again: the
    /// transform copied the encoded bytes in).
    private func drainDecoded(_ transform: any ConnectionTransform, _ transformState: TransformState) {
        let buffer = eventLoop.readBuffer
        reading: while deliveringInput {
            let result: ConnectionTransformRead
            do {
                result = try transform.readDecoded(into: buffer)
            } catch {
                failTransform(error)
                return
            }
            if !transformState.established && transform.isEstablished {
                transformEstablished(transform, transformState)
                guard deliveringInput else { break }
            }
            switch result {
            case .bytes(let count):
                let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)
                if let streamDelegate {
                    streamDelegate.bytesReceived(bytes, on: self)
                } else {
                    deliver(bytes)
                }
            case .needsInput:
                break reading
            case .ended:
                transformState.inputEnded = true
                if !heldInput.isEmpty {
                    // Requests held at the high watermark came before the end: it is told once they are delivered.
                    inputEndHeld = true
                    break reading
                }
                deliveringInput = false
                eventDelegate?.inputEnded(on: self)
                break reading
            }
        }
        if state == .open || state == .closing { collectEncoded(scheduleFlush: true) }
    }

    private func transformEstablished(_ transform: any ConnectionTransform, _ transformState: TransformState) {
        transformState.established = true
        if let timer = transformState.handshakeTimer {
            eventLoop.cancelTimer(timer)
            transformState.handshakeTimer = nil
        }
        eventDelegate?.transformEstablished(applicationProtocol: transform.applicationProtocol, on: self)
        // Output queued during the handshake can go now.
        if !output.isEmpty { scheduleFlush() }
    }

    /// The socket reached end of file while open; false if that failed the transform (which then closes the
    /// connection) or the peer had already ended its input inside it.
    func transformInputReachedEnd() -> Bool {
        guard let transform, let transformState else { return true }
        if transformState.inputEnded { return false }
        do {
            try transform.inputEnded()
        } catch {
            failTransform(error)
            return false
        }
        return true
    }

    /// The transform failed: drop plain output (it can no longer be encoded), send what the transform still has
    /// to say (an alert), and close, reporting `error`.
    func failTransform(_ error: IOError) {
        guard let transformState, !transformState.failed else { return }
        transformState.failed = true
        closeReason = error
        output.removeAll()
        collectEncoded(scheduleFlush: false)
        if state == .open {
            close(afterFlush: options.closeTimeout)
        } else {
            scheduleFlush()
        }
    }

    // MARK: Output

    /// Moves what the transform has to send into the loop's arena, behind what is already waiting.
    func collectEncoded(scheduleFlush schedule: Bool) {
        guard let transform, let transformState else { return }
        var pending = transform.pendingOutputCount
        guard pending > 0 else { return }
        while pending > 0 {
            let offset = eventLoop.arena.reserve(pending)
            let drained = transform.drainOutput(
                into: UnsafeMutableRawBufferPointer(start: eventLoop.arena.mutablePointer(at: offset), count: pending))
            guard drained > 0 else { break }
            eventLoop.arena.commit(drained)
            transformState.encoded.appendArena(start: offset, end: offset + drained)
            pending = transform.pendingOutputCount
        }
        if schedule { scheduleFlush() }
    }

    func scheduleFlush() {
        if !inFlushQueue {
            inFlushQueue = true
            eventLoop.flushQueue.append(self)
        }
    }

    /// The end-of-iteration flush of a connection with a transform.
    func flushTransformed() {
        if writeBlocked {
            // Waiting for EPOLLOUT: only move this iteration's bytes out of the arena.
            transformState?.encoded.spillArena(eventLoop.arena)
            output.spillArena(eventLoop.arena)
            return
        }
        writeOutTransformed()
    }

    /// Writes encoded output as the socket takes it, encoding more plain output as room appears.
    func writeOutTransformed() {
        guard let transform, let transformState else { return }
        sending: while true {
            if !transformState.encoded.isEmpty {
                if let error = send(&transformState.encoded) {
                    finishClose(error: error)
                    return
                }
                // Whatever the socket did not take waits for EPOLLOUT.
                if !transformState.encoded.isEmpty { break sending }
                continue
            }
            if transform.pendingOutputCount > 0 {
                collectEncoded(scheduleFlush: false)
                continue
            }
            guard transformState.established, !transformState.failed, !transformState.saidGoodbye, !output.isEmpty
            else { break sending }
            encodeQueuedOutput(transform, transformState)
            if transformState.failed { break sending }
        }
        if transformState.encoded.isEmpty {
            if writeBlocked {
                writeBlocked = false
                updateInterest()
            }
        } else {
            transformState.encoded.spillArena(eventLoop.arena)
            if !writeBlocked {
                writeBlocked = true
                updateInterest()
            }
        }
        output.spillArena(eventLoop.arena)
        guard state == .open || state == .closing else { return }
        if !isWritable && queuedBytes <= options.lowWatermark {
            isWritable = true
            eventDelegate?.writabilityChanged(true, on: self)
        }
        let plainDone = output.isEmpty || !transformState.established || transformState.failed
        if state == .closing && plainDone && transformState.encoded.isEmpty && transform.pendingOutputCount == 0 {
            beginLingering()
        }
    }

    /// Encodes queued plain output, a record's worth at a time, until a batch is ready to send.
    private func encodeQueuedOutput(_ transform: any ConnectionTransform, _ transformState: TransformState) {
        let scratch: UnsafeMutableRawBufferPointer
        if let existing = eventLoop.transformScratch {
            scratch = existing
        } else {
            scratch = .allocate(byteCount: Self.encodeChunk, alignment: 16)
            eventLoop.transformScratch = scratch
        }
        while !output.isEmpty && transformState.encoded.queuedBytes < Self.encodeBatchLimit {
            let count = output.copyPrefix(into: scratch, arena: eventLoop.arena.baseAddress)
            do {
                try transform.encode(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            } catch {
                output.consume(count)
                failTransform(error)
                return
            }
            output.consume(count)
            collectEncoded(scheduleFlush: false)
        }
    }

    // MARK: Closing

    /// `close(afterFlush:)` began: plain output queued so far still goes out (once the handshake is done).
    func transformCloseRequested() {
        scheduleFlush()
    }

    /// All output is written and the connection is about to send FIN: queue the transform's goodbye first.
    /// Returns true if there is one to send (the flush that sends it comes back to `beginLingering`).
    func transformSaysGoodbye() -> Bool {
        guard let transform, let transformState, !transformState.saidGoodbye else { return false }
        transformState.saidGoodbye = true
        guard !transformState.failed else { return false }
        transform.close()
        guard transform.pendingOutputCount > 0 else { return false }
        collectEncoded(scheduleFlush: true)
        return true
    }

    /// The connection closed: drop encoded output and the handshake timer.
    func endTransform() {
        guard let transformState else { return }
        transformState.encoded.removeAll()
        if let timer = transformState.handshakeTimer {
            eventLoop.cancelTimer(timer)
            transformState.handshakeTimer = nil
        }
    }
}
