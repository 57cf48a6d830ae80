import CNGHTTP2

/// What an `NGHTTP2Session` reports while it parses input or produces output.
///
/// Every method is called from inside an nghttp2 callback, during `receive` or `send`: it may update the
/// delegate's own state but must not call back into the session (no submit, resume or terminate). Work that
/// needs the session is recorded and done after `receive`/`send` returns.
protocol NGHTTP2SessionDelegate: AnyObject {
    /// A frame header arrived (before its payload). False fails the session (a flood).
    func frameBegins(type: UInt8, streamID: Int32, flags: UInt8) -> Bool
    /// A request's header block begins on a new stream.
    func requestBegins(streamID: Int32)
    /// One request header field (names arrive in lower case, validated by nghttp2). False resets the stream.
    func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool
    /// A complete frame was received: a request's HEADERS (with `endStream` when it carries no body), the end
    /// of a DATA run (`endStream`), RST_STREAM, SETTINGS, PING, GOAWAY.
    func frameReceived(type: UInt8, streamID: Int32, endStream: Bool)
    /// Request body bytes of `streamID`.
    func dataReceived(streamID: Int32, bytes: UnsafeRawBufferPointer)
    /// A frame left: response HEADERS or DATA (with `endStream` when it ended the stream), RST_STREAM, GOAWAY.
    func frameSent(type: UInt8, streamID: Int32, endStream: Bool)
    /// `streamID` is closed (normally, or reset with `errorCode` by either side); nghttp2 forgets it now.
    func streamClosed(streamID: Int32, errorCode: UInt32)
    /// nghttp2 may send up to `buffer.count` bytes of `streamID`'s response body: copy them in.
    func readBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2Session.BodyRead
}

/// An HTTP/2 server session of libnghttp2 (1.52), which does no I/O: `receive` feeds it what the socket read,
/// `send` drains what it wants written.
///
/// The C contract kept here: nghttp2 calls back only from inside `nghttp2_session_mem_recv` and
/// `nghttp2_session_mem_send`; data providers return `NGHTTP2_ERR_DEFERRED` while a stream has nothing to send
/// and are woken with `nghttp2_session_resume_data`; a response with trailers ends its data with
/// `NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM`, after which `nghttp2_submit_trailer` sends them;
/// nothing calls into the session from a callback. Loop-confined, like its connection.
final class NGHTTP2Session {
    enum BodyRead {
        /// `count` bytes were copied; `end` when they are the last (trailers follow unless `endStream`).
        case bytes(Int, end: Bool, endStream: Bool)
        /// Nothing to send now; `resume(streamID:)` when there is.
        case deferred
    }

    struct Settings {
        var maxConcurrentStreams: UInt32 = 100
        var initialWindowSize: UInt32 = 65_535
        var maxHeaderListSize: UInt32 = 16 * 1024
        /// CONTINUATION frames allowed after a HEADERS frame (the CONTINUATION flood of 2024).
        var maxContinuations = 8
        /// RST_STREAM frames from the client: a burst, then this many a second (the rapid reset of 2023).
        var resetBurst: UInt64 = 200
        var resetsPerSecond: UInt64 = 33
        /// SETTINGS and PING acknowledgements queued for a peer that does not read, before giving up on it.
        var maxOutboundAcks = 100
    }

    private var session: OpaquePointer?
    /// Unowned: the delegate owns this session and outlives it.
    unowned let delegate: any NGHTTP2SessionDelegate

    init(delegate: any NGHTTP2SessionDelegate, settings: Settings) {
        self.delegate = delegate
        var callbacks: OpaquePointer?
        precondition(nghttp2_session_callbacks_new(&callbacks) == 0, "nghttp2: out of memory")
        defer { nghttp2_session_callbacks_del(callbacks) }
        NGHTTP2Callbacks.install(callbacks)
        var option: OpaquePointer?
        precondition(nghttp2_option_new(&option) == 0, "nghttp2: out of memory")
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_max_continuations(option, settings.maxContinuations)
        nghttp2_option_set_stream_reset_rate_limit(option, settings.resetBurst, settings.resetsPerSecond)
        nghttp2_option_set_max_outbound_ack(option, settings.maxOutboundAcks)
        nghttp2_option_set_no_closed_streams(option, 1)
        let user = Unmanaged.passUnretained(self).toOpaque()
        precondition(nghttp2_session_server_new2(&session, callbacks, user, option) == 0, "nghttp2: out of memory")
        let entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: settings.maxConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                                   value: settings.initialWindowSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: settings.maxHeaderListSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        // The server's SETTINGS frame is queued now and leaves with the first `send`.
        _ = entries.withUnsafeBufferPointer {
            nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
        }
    }

    deinit {
        nghttp2_session_del(session)
    }

    // MARK: I/O

    /// Feeds input; nil when all was processed, else the error that failed the session (after which `send`
    /// still drains its GOAWAY).
    func receive(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let result = nghttp2_session_mem_recv(session, base, bytes.count)
        if result < 0 { return Self.describe(Int32(truncatingIfNeeded: result)) }
        return nil
    }

    /// Hands every chunk of output nghttp2 has ready to `write`, until it has none or `write` returns false
    /// (the connection is full: call again when it drains). The chunk is valid only during `write`.
    /// Returns an error description if the session failed.
    func send(_ write: (UnsafeRawBufferPointer) -> Bool) -> String? {
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { return Self.describe(Int32(truncatingIfNeeded: count)) }
            if count == 0 { return nil }
            if !write(UnsafeRawBufferPointer(start: data, count: count)) { return nil }
        }
    }

    /// Whether the session has anything left to do (false once GOAWAY is exchanged and streams are done).
    var isAlive: Bool { nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0 }

    // MARK: Responses

    /// Submits response headers; with `body` a data provider reads the body through `readBody` (the stream
    /// ends after it, or after trailers), without it the headers end the stream.
    func respond(streamID: Int32, headers: [(name: String, value: String)], body: Bool) -> Bool {
        Self.withHeaders(headers) { nva, count in
            if body {
                var provider = nghttp2_data_provider(source: nghttp2_data_source(fd: 0), read_callback: NGHTTP2Callbacks.readBody)
                return nghttp2_submit_response(session, streamID, nva, count, &provider) == 0
            }
            return nghttp2_submit_response(session, streamID, nva, count, nil) == 0
        }
    }

    /// Submits trailers, which end the stream; only after the body ended with `end` and not `endStream`.
    func trailers(streamID: Int32, _ fields: [(name: String, value: String)]) -> Bool {
        Self.withHeaders(fields) { nva, count in nghttp2_submit_trailer(session, streamID, nva, count) == 0 }
    }

    /// A deferred stream has body bytes (or its end) again.
    func resume(streamID: Int32) {
        _ = nghttp2_session_resume_data(session, streamID)
    }

    func reset(streamID: Int32, errorCode: UInt32) {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// GOAWAY: streams above the last one the session processed are refused; the ones below finish.
    func goAway(errorCode: UInt32, reason: String) {
        let last = nghttp2_session_get_last_proc_stream_id(session)
        var reason = reason
        _ = reason.withUTF8 { bytes in
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, errorCode, bytes.baseAddress, bytes.count)
        }
    }

    /// GOAWAY with an error and no more streams: the session ends once it is sent.
    func terminate(errorCode: UInt32) {
        _ = nghttp2_session_terminate_session(session, errorCode)
    }

    /// The flow-control window the client has granted `streamID` (0: it may not send; -1: no such stream).
    func remoteWindow(streamID: Int32) -> Int32 {
        nghttp2_session_get_stream_remote_window_size(session, streamID)
    }

    // MARK: Helpers

    static let protocolError = NGHTTP2_PROTOCOL_ERROR.rawValue
    static let internalError = NGHTTP2_INTERNAL_ERROR.rawValue
    static let noError = NGHTTP2_NO_ERROR.rawValue
    static let cancel = NGHTTP2_CANCEL.rawValue
    static let enhanceYourCalm = NGHTTP2_ENHANCE_YOUR_CALM.rawValue
    static let refusedStream = NGHTTP2_REFUSED_STREAM.rawValue

    static let frameData = UInt8(NGHTTP2_DATA.rawValue)
    static let frameHeaders = UInt8(NGHTTP2_HEADERS.rawValue)
    static let frameRSTStream = UInt8(NGHTTP2_RST_STREAM.rawValue)
    static let frameSettings = UInt8(NGHTTP2_SETTINGS.rawValue)
    static let framePing = UInt8(NGHTTP2_PING.rawValue)
    static let frameGoAway = UInt8(NGHTTP2_GOAWAY.rawValue)
    static let frameContinuation = UInt8(NGHTTP2_CONTINUATION.rawValue)
    static let flagAck = UInt8(NGHTTP2_FLAG_ACK.rawValue)

    static func describe(_ code: Int32) -> String {
        String(cString: nghttp2_strerror(code))
    }

    /// Lays `fields` out as `nghttp2_nv` entries over one byte buffer for the duration of `body` (nghttp2
    /// copies them during the submit call). Both live in temporary storage (the stack, for the few small fields
    /// a response has), sized by one pass over the fields: a gRPC answer submits headers and trailers, and growing
    /// heap arrays for them cost about ten allocations per call.
    private static func withHeaders<Result>(
        _ fields: [(name: String, value: String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> Result
    ) -> Result {
        var byteCount = 0
        for (name, value) in fields { byteCount += name.utf8.count + value.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(byteCount, 1)) { bytes in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(fields.count, 1)) { nva in
                var offset = 0
                for (index, (name, value)) in fields.enumerated() {
                    let nameStart = bytes.baseAddress! + offset
                    offset += copy(name, into: bytes, at: offset)
                    let valueStart = bytes.baseAddress! + offset
                    offset += copy(value, into: bytes, at: offset)
                    (nva.baseAddress! + index).initialize(to: nghttp2_nv(
                        name: nameStart, value: valueStart, namelen: valueStart - nameStart,
                        valuelen: bytes.baseAddress! + offset - valueStart, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
                }
                return body(UnsafePointer(nva.baseAddress!), fields.count)
            }
        }
    }

    /// Copies `text`'s UTF-8 into `buffer` from `offset`; returns how many bytes.
    private static func copy(_ text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        let (_, end) = UnsafeMutableBufferPointer(rebasing: buffer[offset...]).initialize(from: text.utf8)
        return end
    }

    fileprivate static func from(_ user: UnsafeMutableRawPointer?) -> NGHTTP2Session {
        Unmanaged<NGHTTP2Session>.fromOpaque(user!).takeUnretainedValue()
    }
}

/// The C callbacks, each a thin hop to the session's delegate. None calls into nghttp2.
enum NGHTTP2Callbacks {
    static func install(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, beginFrame)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, header)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamClosed)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, frameSent)
    }

    /// `nghttp2_on_frame_send_callback`: after a frame was serialized for sending.
    static let frameSent: nghttp2_on_frame_send_callback = { _, frame, user in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        NGHTTP2Session.from(user).delegate.frameSent(
            type: header.type, streamID: header.stream_id,
            endStream: header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0)
        return 0
    }

    /// `nghttp2_on_begin_frame_callback`: 0 to go on, `NGHTTP2_ERR_CALLBACK_FAILURE` to fail the session.
    static let beginFrame: nghttp2_on_begin_frame_callback = { _, header, user in
        guard let header else { return 0 }
        let ok = NGHTTP2Session.from(user).delegate.frameBegins(
            type: header.pointee.type, streamID: header.pointee.stream_id, flags: header.pointee.flags)
        return ok ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
    }

    /// `nghttp2_on_begin_headers_callback`: a HEADERS frame opens a request stream (category REQUEST).
    static let beginHeaders: nghttp2_on_begin_headers_callback = { _, frame, user in
        guard let frame, frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        NGHTTP2Session.from(user).delegate.requestBegins(streamID: frame.pointee.hd.stream_id)
        return 0
    }

    /// `nghttp2_on_header_callback`: `NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE` resets just that stream.
    static let header: nghttp2_on_header_callback = { _, frame, name, nameCount, value, valueCount, _, user in
        guard let frame else { return 0 }
        let ok = NGHTTP2Session.from(user).delegate.header(
            streamID: frame.pointee.hd.stream_id, name: UnsafeRawBufferPointer(start: name, count: nameCount),
            value: UnsafeRawBufferPointer(start: value, count: valueCount))
        return ok ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
    }

    /// `nghttp2_on_frame_recv_callback`: after a whole frame (HEADERS with its CONTINUATIONs).
    static let frameReceived: nghttp2_on_frame_recv_callback = { _, frame, user in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        NGHTTP2Session.from(user).delegate.frameReceived(
            type: header.type, streamID: header.stream_id,
            endStream: header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0)
        return 0
    }

    /// `nghttp2_on_data_chunk_recv_callback`: the bytes are valid only during the call.
    static let dataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, count, user in
        NGHTTP2Session.from(user).delegate.dataReceived(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: count))
        return 0
    }

    static let streamClosed: nghttp2_on_stream_close_callback = { _, streamID, errorCode, user in
        NGHTTP2Session.from(user).delegate.streamClosed(streamID: streamID, errorCode: errorCode)
        return 0
    }

    /// `nghttp2_data_source_read_callback`: copies up to `length` bytes, `NGHTTP2_ERR_DEFERRED` when there are
    /// none yet; at the end `NGHTTP2_DATA_FLAG_EOF`, plus `NGHTTP2_DATA_FLAG_NO_END_STREAM` when trailers follow.
    static let readBody: nghttp2_data_source_read_callback = { session, streamID, buffer, length, flags, _, user in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let target = UnsafeMutableRawBufferPointer(start: buffer, count: length)
        switch NGHTTP2Session.from(user).delegate.readBody(streamID: streamID, into: target) {
        case .deferred:
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .bytes(let count, let end, let endStream):
            if end {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
                if !endStream { flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue }
            }
            return count
        }
    }
}
