extension Connection {
    /// Reads at most this many times per readiness event before yielding to other descriptors.
    static let readsPerEvent = 4

    /// Event loop callback: input (or end of file) is ready. Reads into the loop's shared buffer.
    public func readable() {
        guard (state == .open || state == .closing) && readingInput && !inputPaused else { return }
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
                if deliveringFrames {
                    deliver(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
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

    /// Hands every complete frame in `bytes` to the delegate.
    private func deliver(_ bytes: UnsafeRawBufferPointer) {
        var input = bytes
        isDelivering = true
        defer {
            isDelivering = false
            if state == .closed { decoder.releaseBuffer() }
        }
        while deliveringFrames {
            let body: UnsafeRawBufferPointer?
            do {
                body = try decoder.next(from: &input)
            } catch {
                decodingFailed(error)
                return
            }
            guard let body else { return }
            delegate?.frameReceived(body, on: self)
        }
    }

    private func decodingFailed(_ error: FrameError) {
        deliveringFrames = false
        delegate?.frameDecodingFailed(error, on: self)
        if state == .open {
            close(afterFlush: options.closeTimeout)
        }
    }

    /// The peer sent FIN.
    private func inputReachedEnd() {
        readingInput = false
        updateInterest()
        switch state {
        case .open:
            deliveringFrames = false
            delegate?.inputEnded(on: self)
        case .closing:
            if outputShutDown { finishClose(error: nil) }
        case .idle, .closed:
            break
        }
    }
}
