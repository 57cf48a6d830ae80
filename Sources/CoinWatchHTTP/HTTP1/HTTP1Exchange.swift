import CoinWatchConnect
import CoinWatchRPC

/// One request's answer on an HTTP/1.1 connection, in its place in the pipeline: a complete response
/// (`Content-Length`), or a streamed one (`Transfer-Encoding: chunked`, so a browser's `fetch` reads each
/// Connect envelope as it comes). What it writes before its turn waits in `buffered`; once it is the oldest
/// unanswered request, its bytes go straight to the connection. Loop-confined, owned by its `HTTP1Session`,
/// which reuses a finished one for its next request when nothing else still holds it.
final class HTTP1Exchange: ConnectHTTPResponder {
    unowned let session: HTTP1Session
    private(set) var isHead: Bool
    /// HTTP/1.0 has no chunked coding: a stream is sent raw and ended by closing the connection.
    private(set) var isHTTP10: Bool
    var closeAfter: Bool
    /// The oldest unanswered request: writes go to the connection.
    private(set) var isActive = false
    /// The whole response has been written (to the connection or to `buffered`).
    private(set) var isComplete = false
    private var isStreaming = false
    private var buffered: [UInt8] = []
    /// The Connect call answering this request, while it runs.
    var sink: ConnectCallSink?

    init(session: HTTP1Session, isHead: Bool, isHTTP10: Bool, closeAfter: Bool) {
        self.session = session
        self.isHead = isHead
        self.isHTTP10 = isHTTP10
        self.closeAfter = closeAfter
    }

    /// Whether it may become another request's exchange: its answer is complete and all of it handed on.
    var isReusable: Bool { isComplete && sink == nil && buffered.isEmpty }

    /// Makes a finished exchange that nothing else holds (its session checked that, and `isReusable`) the exchange
    /// of a new request.
    func reuse(isHead: Bool, isHTTP10: Bool, closeAfter: Bool) {
        self.isHead = isHead
        self.isHTTP10 = isHTTP10
        self.closeAfter = closeAfter
        isActive = false
        isComplete = false
        isStreaming = false
    }

    /// Its turn has come: what it buffered leaves now.
    func activate() {
        isActive = true
        if !buffered.isEmpty {
            session.connection.enqueue(buffered)
            buffered = []
        }
        if !isComplete { sink?.becameWritable() }
    }

    /// Answers with a complete `HTTPResponse` (the operators' endpoints, refusals, the dashboard).
    func respond(_ response: HTTPResponse) {
        response.body.withUnsafeBytes { respond(status: response.status, contentType: nil, headers: response.headers, body: $0) }
    }

    // MARK: ConnectHTTPResponder

    func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
        respond(status: status, contentType: Optional(contentType), headers: headers, body: body)
    }

    private func respond(status: Int, contentType: String?, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
        guard !isComplete, !isStreaming else { return }
        // One write for a small answer (a unary call's, usually): head and body in one piece of output, made in
        // one allocation.
        let together = !isHead && !body.isEmpty && body.count <= 4096
        var head = session.takeScratch()
        self.head(status: status, contentType: contentType, headers: headers, into: &head)
        Self.appendField("content-length", String(body.count), to: &head)
        if closeAfter { Self.appendField("connection", "close", to: &head) }
        head += [13, 10]
        if together {
            head.append(contentsOf: body)
            write(head)
        } else {
            write(head)
            if !isHead && !body.isEmpty { write(Array(body)) }
        }
        session.returnScratch(head)
        complete()
    }

    func startStream(status: Int, headers: [(name: String, value: String)]) {
        guard !isComplete, !isStreaming else { return }
        isStreaming = true
        var head: [UInt8] = []
        self.head(status: status, contentType: nil, headers: headers, into: &head)
        if isHTTP10 {
            closeAfter = true
        } else {
            Self.appendField("transfer-encoding", "chunked", to: &head)
        }
        if closeAfter { Self.appendField("connection", "close", to: &head) }
        head += [13, 10]
        write(head)
    }

    func stream(_ bytes: [UInt8]) {
        guard isStreaming, !isComplete, !bytes.isEmpty, !isHead else { return }
        if isHTTP10 {
            write(bytes)
        } else {
            write(Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10])
        }
    }

    func finish() {
        guard isStreaming, !isComplete else { return }
        if !isHTTP10 && !isHead { write(Array("0\r\n\r\n".utf8)) }
        complete()
    }

    /// Writable only in its turn, while the connection is under its high watermark: a stream waiting behind
    /// another response, or to a client that does not read, conflates instead of queueing.
    var isWritable: Bool { isActive && session.connection.isWritable }

    var queuedBytes: Int { buffered.count + (isActive ? session.connection.queuedBytes : 0) }

    // MARK: Helpers

    /// Appends the status line and fields to `head`, as bytes: built for every response, so without string
    /// interpolation.
    private func head(
        status: Int, contentType: String?, headers: [(name: String, value: String)], into head: inout [UInt8]
    ) {
        head += "HTTP/1.1 ".utf8
        head += String(status).utf8
        head.append(0x20)
        head += HTTPResponse.reason(status).utf8
        head += [13, 10]
        if let contentType { Self.appendField("Content-Type", contentType, to: &head) }
        for (name, value) in headers { Self.appendField(name, value, to: &head) }
    }

    private static func appendField(_ name: String, _ value: String, to head: inout [UInt8]) {
        head += name.utf8
        head += [0x3a, 0x20]
        head += value.utf8
        head += [13, 10]
    }

    private func write(_ bytes: [UInt8]) {
        if isActive {
            session.connection.enqueue(bytes)
        } else {
            buffered.append(contentsOf: bytes)
        }
    }

    private func complete() {
        isComplete = true
        sink = nil
        session.exchangeCompleted(self)
    }
}
