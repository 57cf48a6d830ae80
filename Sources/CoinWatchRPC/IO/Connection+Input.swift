extension Connection {
    /// Reads at most this many times per readiness event before yielding to other descriptors.
    static let readsPerEvent = 4

    /// Event loop callback: input (or end of file) is ready. Reads into the loop's shared buffer.
    public func readable() {
        guard (state == .open || state == .closing) && readingInput && !inputPaused else { return }
        if !heldInput.isEmpty {
            deliverHeldInput()
            guard heldInput.isEmpty, !inputPaused, state == .open || state == .closing else { return }
        }
        let buffer = eventLoop.readBuffer
        var reads = 0
        while true {
            eventLoop.stats.reads &+= 1
            let result: Sys.ReadResult
            do {
                result = try Sys.read(fd, into: buffer)
            } catch {
                finishClose(error: error)
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .endOfFile:
                inputReachedEnd()
                return
            case .bytes(let count):
                if deliveringInput {
                    let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)
                    if transform != nil {
                        receiveEncoded(bytes, UnsafeRawBufferPointer(start: nil, count: 0))
                    } else if let streamDelegate {
                        streamDelegate.bytesReceived(bytes, on: self)
                    } else {
                        deliver(bytes)
                    }
                }
                reads += 1
                // A short read means the socket is drained; level-triggered epoll calls us again
                // if more arrives.
                guard count == buffer.count, reads < Self.readsPerEvent, readingInput, !inputPaused, state != .closed else {
                    return
                }
            }
        }
    }

    /// Hands every complete frame in `bytes` to the delegate, until the delegate pauses input: the rest is held
    /// (`heldInput`) until it resumes.
    func deliver(_ bytes: UnsafeRawBufferPointer) {
        if !heldInput.isEmpty && !isDeliveringHeldInput {
            // Behind frames already held: kept in order.
            if deliveringInput { heldInput.append(contentsOf: bytes) }
            return
        }
        var input = bytes
        isDelivering = true
        defer {
            isDelivering = false
            if state == .closed || streamDelegate != nil { decoder.releaseBuffer() }
        }
        while deliveringInput {
            if inputPaused && streamDelegate == nil {
                if !input.isEmpty { heldInput.append(contentsOf: input) }
                return
            }
            let body: UnsafeRawBufferPointer?
            do {
                body = try decoder.next(from: &input)
            } catch {
                decodingFailed(error, remaining: input)
                return
            }
            guard let body else { return }
            delegate?.frameReceived(body, on: self)
            if streamDelegate != nil {
                // The delegate switched protocols after this frame: the rest of the read is the new one's.
                replay(UnsafeRawBufferPointer(start: nil, count: 0), input)
                return
            }
        }
    }

    /// Delivers the frames held while input was paused, as far as the delegate lets it this time.
    func deliverHeldInput() {
        guard !heldInput.isEmpty, !inputPaused, state == .open || state == .closing else { return }
        let held = heldInput
        heldInput = []
        isDeliveringHeldInput = true
        held.withUnsafeBytes { deliver($0) }
        isDeliveringHeldInput = false
        if heldInput.isEmpty && inputEndHeld && deliveringInput && state == .open {
            inputEndHeld = false
            deliveringInput = false
            eventDelegate?.inputEnded(on: self)
        }
    }

    /// The decoder gave up on `error`; `remaining` is the unread rest of the current read.
    private func decodingFailed(_ error: FrameError, remaining: UnsafeRawBufferPointer) {
        deliveringInput = false
        delegate?.frameDecodingFailed(error, on: self)
        if transformState?.replayPending == true {
            // The delegate started a transform (a TLS handshake was recognised): everything read so far is
            // the transform's, and what it decodes starts a new frame stream.
            transformState?.replayPending = false
            deliveringInput = state == .open
            decoder = FrameDecoder(maxFrameBytes: options.maxFrameBytes)
            error.prefix.withUnsafeBytes { receiveEncoded($0, remaining) }
            return
        }
        if streamDelegate != nil {
            // Recognised as another protocol: only a prefix can fail this way, so the bytes read so far
            // are the four prefix bytes (some possibly from earlier reads) followed by the rest of this read.
            deliveringInput = state == .open
            error.prefix.withUnsafeBytes { replay($0, remaining) }
            return
        }
        if state == .open {
            close(afterFlush: options.closeTimeout)
        }
    }

    /// Delivers `first` then `second` to the byte-stream delegate, as one buffer when both are non-empty
    /// (a protocol parser sees the stream's first bytes together, as they were sent).
    private func replay(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) {
        guard deliveringInput, let streamDelegate else { return }
        if first.isEmpty || second.isEmpty {
            let only = first.isEmpty ? second : first
            if !only.isEmpty { streamDelegate.bytesReceived(only, on: self) }
            return
        }
        withUnsafeTemporaryAllocation(byteCount: first.count + second.count, alignment: 1) { joined in
            joined.baseAddress!.copyMemory(from: first.baseAddress!, byteCount: first.count)
            (joined.baseAddress! + first.count).copyMemory(from: second.baseAddress!, byteCount: second.count)
            streamDelegate.bytesReceived(UnsafeRawBufferPointer(joined), on: self)
        }
    }

    /// Switches a frame-mode connection to byte-stream mode: from now on every read goes to `delegate`
    /// as it is, and so does any input already read but not yet delivered as frames.
    ///
    /// Meant for protocol detection: called from ``ConnectionDelegate/frameDecodingFailed(_:on:)`` when the
    /// first bytes are an HTTP request or a TLS handshake, the new delegate receives the whole stream from
    /// its first byte; called from ``ConnectionDelegate/frameReceived(_:on:)``, it receives what followed
    /// that frame. The frame delegate hears nothing more (not even ``ConnectionEventDelegate/connectionClosed(_:error:)``).
    /// Loop only; the connection must be open.
    public func switchToByteStream(_ delegate: any ByteStreamDelegate) {
        eventLoop.preconditionInEventLoop()
        precondition(state == .open, "switchToByteStream on a connection that is not open")
        self.delegate = nil
        streamDelegate = delegate
        if !isDelivering { decoder.releaseBuffer() }
    }

    /// The peer sent FIN.
    private func inputReachedEnd() {
        readingInput = false
        updateInterest()
        switch state {
        case .open:
            if transform != nil, !transformInputReachedEnd() { return }
            deliveringInput = false
            eventDelegate?.inputEnded(on: self)
        case .closing:
            if outputShutDown { finishClose(error: nil) }
        case .idle, .closed:
            break
        }
    }
}
