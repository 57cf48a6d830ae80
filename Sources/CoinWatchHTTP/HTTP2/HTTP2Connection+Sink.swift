import CoinWatchRPC

/// gRPC's side of a call: messages as length-prefixed DATA, the status as trailers.
extension HTTP2Connection: CallSink {
    func answer(callID: UInt64, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        guard let stream = streams[Int32(truncatingIfNeeded: callID)] else { return }
        guard code == .ok else {
            refuse(stream, code, message)
            return
        }
        stream.appendMessage(payload, UnsafeRawBufferPointer(start: nil, count: 0))
        endBody(stream, code: code, message: message)
    }

    func send(_ call: ServerCall, payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        guard let stream = streams[Int32(truncatingIfNeeded: call.id)], !stream.isClosed, !stream.bodyEnded else { return }
        startResponse(stream)
        stream.appendMessage(payload, suffix)
        if stream.pendingCount > configuration.http2.streamHighWatermark { stream.reportedWritable = false }
        wake(stream)
    }

    func end(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        forget(call)
        guard let stream = streams[Int32(truncatingIfNeeded: call.id)], !stream.isClosed, !stream.bodyEnded else { return }
        if code == .ok && !call.isStreaming {
            stream.appendMessage(payload, UnsafeRawBufferPointer(start: nil, count: 0))
        }
        if code != .ok && !stream.responseStarted {
            refuse(stream, code, message)
            return
        }
        if code != .ok && stream.pendingCount > 0 && session.remoteWindow(streamID: stream.id) <= 0 {
            // The client grants no window, so neither the queued messages nor the trailers behind them can
            // leave: reset the stream (ENHANCE_YOUR_CALM, which gRPC clients read as RESOURCE_EXHAUSTED).
            stream.pending = []
            stream.pendingStart = 0
            stream.bodyEnded = true
            stream.kind = .refused
            session.reset(streamID: stream.id,
                          errorCode: code == .resourceExhausted ? NGHTTP2Session.enhanceYourCalm : NGHTTP2Session.cancel)
            scheduleFlush()
            return
        }
        endBody(stream, code: code, message: message)
    }

    func forget(_ call: ServerCall) {
        guard call.isRegistered else { return }
        call.isRegistered = false
        liveCalls -= 1
        streams[Int32(truncatingIfNeeded: call.id)]?.call = nil
    }

    /// Writable while the connection is below its high watermark, the stream's queued bytes below their
    /// bound, and the client has granted the stream window for what is queued: a reader that grants none is a
    /// slow consumer at once (its stream conflates), not after its queue has filled.
    func isWritable(_ call: ServerCall) -> Bool {
        guard let stream = streams[Int32(truncatingIfNeeded: call.id)] else { return false }
        let writable = connection.isWritable && stream.pendingCount <= configuration.http2.streamHighWatermark
            && (stream.pendingCount == 0 || session.remoteWindow(streamID: stream.id) > 0)
        if !writable { stream.reportedWritable = false }
        return writable
    }

    func queuedBytes(_ call: ServerCall) -> Int {
        (streams[Int32(truncatingIfNeeded: call.id)]?.pendingCount ?? 0) + connection.queuedBytes
    }

    // MARK: Helpers

    /// Response headers with a body provider, once per stream.
    private func startResponse(_ stream: HTTP2Stream) {
        guard !stream.responseStarted else { return }
        stream.responseStarted = true
        let headers = asksForGRPCProto(stream) ? Self.grpcProtoResponseHeaders : Self.grpcResponseHeaders
        _ = session.respond(streamID: stream.id, headers: headers, body: true)
    }

    /// A gRPC answer's headers, made once (they differ only in the content type the request named).
    private static let grpcResponseHeaders = responseHeaders(contentType: grpcContentType)
    private static let grpcProtoResponseHeaders = responseHeaders(contentType: grpcProtoContentType)

    private static func responseHeaders(contentType: String) -> [(name: String, value: String)] {
        [(":status", "200"), ("content-type", contentType), ("grpc-accept-encoding", "identity")]
    }

    /// No more messages: the body ends once drained, then the trailers carry the status.
    private func endBody(_ stream: HTTP2Stream, code: RPCError.Code, message: String) {
        startResponse(stream)
        stream.bodyEnded = true
        stream.trailers = GRPCWire.statusFields(code: code.rawValue, message: message)
        wake(stream)
    }

    /// The stream has bytes or its end: resume a deferred provider, and flush.
    func wake(_ stream: HTTP2Stream) {
        if stream.deferred {
            stream.deferred = false
            session.resume(streamID: stream.id)
        }
        scheduleFlush()
    }
}
