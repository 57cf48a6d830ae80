import CoinWatchLogging
import CoinWatchRPC
import CoinWatchCore

/// The session's callbacks: each records into the connection's own state and never calls the session.
extension HTTP2Connection: NGHTTP2SessionDelegate {
    func frameBegins(type: UInt8, streamID: Int32, flags: UInt8) -> Bool {
        // PING and SETTINGS each cost an acknowledgement: a peer sending them without pause (the floods that
        // have hurt servers) gets a token bucket per kind, then GOAWAY.
        guard type == NGHTTP2Session.framePing || type == NGHTTP2Session.frameSettings, flags & NGHTTP2Session.flagAck == 0
        else { return true }
        let limits = configuration.http2
        let now = MonotonicClock.nanoseconds()
        let elapsed = Double(now - tokensRefilledNanos) / 1e9
        tokensRefilledNanos = now
        let burst = Double(limits.controlFrameBurst)
        pingTokens = min(burst, pingTokens + elapsed * limits.controlFramesPerSecond)
        settingsTokens = min(burst, settingsTokens + elapsed * limits.controlFramesPerSecond)
        if type == NGHTTP2Session.framePing {
            guard pingTokens >= 1 else {
                server.logger.notice("HTTP/2 PING flood; closing", ["peer": peer])
                flooded = true
                return false
            }
            pingTokens -= 1
        } else {
            guard settingsTokens >= 1 else {
                server.logger.notice("HTTP/2 SETTINGS flood; closing", ["peer": peer])
                flooded = true
                return false
            }
            settingsTokens -= 1
        }
        return true
    }

    func requestBegins(streamID: Int32) {
        streams[streamID] = HTTP2Stream(id: streamID)
    }

    func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        guard let stream = streams[streamID] else { return true }
        // The HPACK-decoded size, as SETTINGS_MAX_HEADER_LIST_SIZE counts it: a block beyond the advertised
        // bound resets the stream.
        stream.headerBytes += name.count + value.count + 32
        guard stream.headerBytes <= Int(configuration.http2.session.maxHeaderListSize) else { return false }
        guard let field = HTTP2RequestFields.Name(name) else {
            // Not a field this server reads itself: kept for a Connect call, and as the caller's metadata unless
            // it is HTTP's or gRPC's own. Pseudo-fields other than those read are not kept.
            guard name.first != UInt8(ascii: ":") else { return true }
            let key = String(decoding: name, as: UTF8.self)
            let text = String(decoding: value, as: UTF8.self)
            keep(key, text, in: stream)
            if !GRPCWire.isReserved(key) {
                // Repeated keys are joined as HTTP joins repeated fields.
                if let existing = stream.metadata[key] {
                    stream.metadata[key] = existing + "," + text
                } else {
                    stream.metadata[key] = text
                }
            }
            return true
        }
        if field.isPseudo {
            // :scheme and :authority are not read.
            if field == .method { stream.method = requestFields.value(.method, value) }
            if field == .path { stream.target = requestFields.target(value) }
            return true
        }
        let text = requestFields.value(field, value)
        keep(field.text, text, in: stream)
        switch field {
        case .contentType: stream.contentType = text
        case .te: stream.te = text
        case .grpcTimeout: stream.timeout = text
        case .grpcEncoding: stream.encoding = text
        case .userAgent, .method, .path, .scheme, .authority: break
        }
        return true
    }

    /// Adds a (non-pseudo) field to the request's list, which a Connect call routes and reads its metadata from.
    private func keep(_ name: String, _ value: String, in stream: HTTP2Stream) {
        // Room for a usual request's headers at once, rather than growing through 1, 2, 4 entries.
        if stream.headers.isEmpty { stream.headers.reserveCapacity(8) }
        stream.headers.append((name, value))
    }

    func frameReceived(type: UInt8, streamID: Int32, endStream: Bool) {
        guard streamID != 0, let stream = streams[streamID] else { return }
        if type == NGHTTP2Session.frameHeaders, case .pending = stream.kind {
            events.append(.headers(streamID))
        }
        if endStream && (type == NGHTTP2Session.frameHeaders || type == NGHTTP2Session.frameData) {
            events.append(.requestEnded(streamID))
        }
    }

    func dataReceived(streamID: Int32, bytes: UnsafeRawBufferPointer) {
        guard let stream = streams[streamID] else { return }
        switch stream.kind {
        case .refused, .plain:
            return
        case .connect:
            gatherBody(stream, bytes)
            return
        case .pending where !stream.carriesGRPC:
            // Headers are always complete before DATA, but their routing runs after this receive: keep the body
            // of what is not gRPC for the Connect call it may be.
            gatherBody(stream, bytes)
            return
        case .pending, .grpc:
            break
        }
        if stream.reader == nil {
            stream.reader = GRPCMessageReader(maxMessageBytes: server.dispatcher.maxMessageBytes)
        }
        guard stream.reader!.failure == nil else { return }
        stream.reader!.append(bytes) { message in
            events.append(.message(streamID, Array(message)))
        }
        if let failure = stream.reader!.failure {
            events.append(.readerFailed(streamID, failure))
        }
    }

    /// Keeps a Connect request's body, up to the server's bound.
    private func gatherBody(_ stream: HTTP2Stream, _ bytes: UnsafeRawBufferPointer) {
        guard !stream.bodyTooLarge else { return }
        guard stream.body.count + bytes.count <= server.maxConnectBodyBytes else {
            stream.bodyTooLarge = true
            stream.body = []
            return
        }
        stream.body.append(contentsOf: bytes)
    }

    func frameSent(type: UInt8, streamID: Int32, endStream: Bool) {
        // A refusal went out while the client was still sending its request: now (not before, or nghttp2 would
        // drop the response for a closing stream) ask it to stop with RST_STREAM(NO_ERROR).
        guard endStream, let stream = streams[streamID], stream.resetAfterResponse, !stream.requestEnded else { return }
        stream.resetAfterResponse = false
        resetsDue.append(streamID)
    }

    func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams[streamID] else { return }
        stream.isClosed = true
        events.append(.closed(streamID, errorCode))
        if !isReceiving && !isFlushing {
            processEvents()
        }
    }

    func readBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2Session.BodyRead {
        guard let stream = streams[streamID] else { return .bytes(0, end: true, endStream: true) }
        let count = stream.take(into: buffer)
        if !stream.reportedWritable && stream.pendingCount <= configuration.http2.streamLowWatermark {
            writableAgain.append(streamID)
        }
        if stream.pendingCount == 0 {
            if stream.bodyEnded {
                stream.bodyEndSent = true
                if stream.trailers != nil { trailersDue.append(streamID) }
                return .bytes(count, end: true, endStream: stream.trailers == nil)
            }
            if count == 0 {
                stream.deferred = true
                return .deferred
            }
        }
        return .bytes(count, end: false, endStream: false)
    }
}
