extension Connection {
    // MARK: Queueing

    /// Queues a copy of `bytes`. Dropped unless the connection is open.
    public func enqueue(_ bytes: UnsafeRawBufferPointer) {
        eventLoop.assertInEventLoop()
        guard state == .open, !bytes.isEmpty else { return }
        let offset = eventLoop.arena.append(bytes)
        output.appendArena(start: offset, end: offset + bytes.count)
        didEnqueue()
    }

    /// Queues a copy of `bytes`. Dropped unless the connection is open.
    public func enqueue(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { enqueue($0) }
    }

    /// Queues `payload` by reference (no copy); it may be queued on any number of connections.
    public func enqueue(_ payload: SharedBytes) {
        enqueue(payload, range: 0..<payload.count)
    }

    /// Queues `payload[range]` by reference (no copy).
    public func enqueue(_ payload: SharedBytes, range: Range<Int>) {
        eventLoop.assertInEventLoop()
        precondition(range.lowerBound >= 0 && range.upperBound <= payload.count, "range outside the payload")
        guard state == .open, !range.isEmpty else { return }
        output.append(payload, start: range.lowerBound, end: range.upperBound)
        didEnqueue()
    }

    /// Lets `body` write up to `capacity` bytes straight into the output (e.g. a protobuf packer),
    /// avoiding an intermediate buffer; `body` returns how many it wrote. `body` must not queue
    /// output itself (on this or another connection). Not called when `capacity` is 0 or the connection
    /// is not open.
    public func withUnsafeOutputBuffer(capacity: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) {
        eventLoop.assertInEventLoop()
        precondition(capacity >= 0, "negative capacity")
        guard state == .open, capacity > 0 else { return }
        let offset = eventLoop.arena.reserve(capacity)
        let written = body(UnsafeMutableRawBufferPointer(start: eventLoop.arena.mutablePointer(at: offset), count: capacity))
        precondition(written >= 0 && written <= capacity, "wrote \(written) bytes into a \(capacity)-byte buffer")
        guard written > 0 else { return }
        eventLoop.arena.commit(written)
        output.appendArena(start: offset, end: offset + written)
        didEnqueue()
    }

    /// Queues the 4-byte length prefix of a frame whose body (`bodyLength` bytes) is queued next.
    public func enqueueFrameHeader(bodyLength: Int) {
        withUnsafeOutputBuffer(capacity: FrameEncoder.headerSize) { buffer in
            FrameEncoder.writeHeader(bodyLength: bodyLength, to: buffer.baseAddress!)
            return FrameEncoder.headerSize
        }
    }

    /// Queues a frame: length prefix plus a copy of `body`.
    public func enqueueFrame(body: UnsafeRawBufferPointer) {
        enqueueFrame(bodyLength: body.count) { target in
            if !body.isEmpty { target.baseAddress!.copyMemory(from: body.baseAddress!, byteCount: body.count) }
        }
    }

    /// Queues a frame whose body of exactly `bodyLength` bytes `writeBody` encodes in place.
    public func enqueueFrame(bodyLength: Int, _ writeBody: (UnsafeMutableRawBufferPointer) -> Void) {
        withUnsafeOutputBuffer(capacity: FrameEncoder.headerSize + bodyLength) { buffer in
            FrameEncoder.writeHeader(bodyLength: bodyLength, to: buffer.baseAddress!)
            writeBody(UnsafeMutableRawBufferPointer(rebasing: buffer[FrameEncoder.headerSize...]))
            return buffer.count
        }
    }

    /// Queues one frame made of a per-connection `prefix`, a shared `payload` (by reference) and a
    /// per-connection `suffix`: "encode once, send many" for fan-out.
    public func enqueueFrame(prefix: UnsafeRawBufferPointer, payload: SharedBytes, suffix: UnsafeRawBufferPointer) {
        enqueueFrameHeader(bodyLength: prefix.count + payload.count + suffix.count)
        enqueue(prefix)
        enqueue(payload)
        enqueue(suffix)
    }

    private func didEnqueue() {
        if !inFlushQueue {
            inFlushQueue = true
            eventLoop.flushQueue.append(self)
        }
        if isWritable && queuedBytes > options.highWatermark {
            isWritable = false
            eventDelegate?.writabilityChanged(false, on: self)
        }
    }

    // MARK: Writing

    /// Called by the loop at the end of the iteration in which output was queued.
    func flushFromLoop() {
        inFlushQueue = false
        guard state == .open || state == .closing else { return }
        if transform != nil {
            flushTransformed()
            return
        }
        guard !output.isEmpty else { return }
        if writeBlocked {
            // The kernel buffer was full when last tried; wait for EPOLLOUT rather than spend a
            // syscall on EAGAIN, but move this iteration's bytes out of the arena.
            output.spillArena(eventLoop.arena)
            return
        }
        writeOut()
    }

    /// Writes as much queued output as the socket takes, in batches of up to IOV_MAX buffers.
    func writeOut() {
        if transform != nil {
            writeOutTransformed()
            return
        }
        if let error = send(&output) {
            finishClose(error: error)
            return
        }
        if output.isEmpty {
            if writeBlocked {
                writeBlocked = false
                updateInterest()
            }
        } else {
            output.spillArena(eventLoop.arena)
            if !writeBlocked {
                writeBlocked = true
                updateInterest()
            }
        }
        guard state == .open || state == .closing else { return }
        if !isWritable && output.queuedBytes <= options.lowWatermark {
            isWritable = true
            eventDelegate?.writabilityChanged(true, on: self)
        }
        if state == .closing && output.isEmpty {
            beginLingering()
        }
    }

    /// Sends `queue` as far as the socket takes it, in batches of up to IOV_MAX buffers; returns the error
    /// that ended the connection (the caller closes it, once `queue` is no longer borrowed).
    @inline(__always)
    func send(_ queue: inout OutboundQueue) -> IOError? {
        let vectors = eventLoop.ioVectors
        while !queue.isEmpty {
            let batch = queue.fillVectors(vectors, arena: eventLoop.arena.baseAddress)
            let written: Int?
            eventLoop.stats.writes &+= 1
            do {
                written = try Sys.sendv(fd, vectors, count: batch.count)
            } catch {
                return error
            }
            guard let written else { break }
            queue.consume(written)
            // A short write means the socket buffer is full: skip the EAGAIN round trip.
            if written < batch.bytes { break }
        }
        return nil
    }
}
