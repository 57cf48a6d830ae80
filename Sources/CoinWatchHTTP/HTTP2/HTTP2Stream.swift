import CoinWatchConnect
import CoinWatchRPC

/// One HTTP/2 stream of an `HTTP2Connection`: its request as it arrives and its response as it leaves.
/// Loop-confined.
final class HTTP2Stream {
    enum Kind {
        /// Headers not complete yet.
        case pending
        /// A gRPC call to method `method` of the dispatcher's table.
        case grpc(method: Int)
        /// A Connect call: its body is gathered, and the call starts once the request ends.
        case connect
        /// Anything else HTTP: answered once the request ends.
        case plain(HTTPRoute)
        /// Answered already (a refusal); later input is ignored.
        case refused
    }

    let id: Int32

    // MARK: Request
    var method = ""
    /// `:path`, split at its query.
    var target = RequestTarget("")
    var contentType: String? {
        didSet { carriesGRPC = HTTPRoute.isGRPC(contentType: contentType) }
    }
    /// Whether the request's content type is gRPC's (read for every DATA frame, so kept rather than worked out).
    private(set) var carriesGRPC = false
    var te: String?
    var timeout: String?
    var encoding: String?
    var metadata: [String: String] = [:]
    var headerBytes = 0
    var kind = Kind.pending
    var reader: GRPCMessageReader?
    var requestEnded = false
    var messagesReceived = 0
    /// Every header of the request (lower-case names), for a Connect call's routing and metadata.
    var headers: [(name: String, value: String)] = []
    /// A Connect request's body as it arrives, up to the server's bound (`bodyTooLarge` past it).
    var body: [UInt8] = []
    var bodyTooLarge = false

    // MARK: Call
    /// A gRPC call (this connection is its sink).
    var call: ServerCall?
    /// A Connect call (its sink answers through an `HTTP2ConnectResponder`).
    var connect: ConnectCallSink?

    /// The call running on this stream, whichever protocol started it.
    var runningCall: ServerCall? { call ?? connect?.call }

    /// The value of request header `name` (lower case).
    func header(_ name: String) -> String? {
        headers.last { $0.name == name }?.value
    }

    // MARK: Response
    /// Response headers are submitted (with a body provider unless Trailers-Only).
    var responseStarted = false
    /// Body bytes waiting for the client's flow-control window (from `pendingStart`).
    var pending: [UInt8] = []
    var pendingStart = 0
    /// No more body bytes will be added: the provider reports the end when `pending` is drained.
    var bodyEnded = false
    /// Sent after the body (gRPC's status); nil for a plain response, whose last DATA frame ends the stream.
    var trailers: [(name: String, value: String)]?
    /// The provider has reported the end; the trailers are due.
    var bodyEndSent = false
    var trailersSubmitted = false
    /// The provider returned NGHTTP2_ERR_DEFERRED and must be resumed when bytes (or the end) arrive.
    var deferred = false
    /// Answered before the request ended: once the answer is sent, RST_STREAM(NO_ERROR) stops the upload.
    var resetAfterResponse = false
    /// nghttp2 has closed the stream.
    var isClosed = false
    /// The last writability reported to the call (false after a send left it above the stream's bound).
    var reportedWritable = true

    init(id: Int32) {
        self.id = id
    }

    var pendingCount: Int { pending.count - pendingStart }

    /// Appends one length-prefixed gRPC message (`payload` then `suffix`).
    func appendMessage(_ payload: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer) {
        if pendingStart > 0 && pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 << 10)
            pendingStart = 0
        }
        // The first message is laid out in one allocation (prefix, then payload, would be two); later ones grow
        // the buffer as an array grows.
        if pending.isEmpty { pending.reserveCapacity(5 + payload.count + suffix.count) }
        GRPCMessageReader.writePrefix(length: payload.count + suffix.count, into: &pending)
        pending.append(contentsOf: payload)
        pending.append(contentsOf: suffix)
    }

    /// Copies pending body bytes into `buffer`; returns how many.
    func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, pendingCount)
        guard count > 0 else { return 0 }
        pending.withUnsafeBytes { bytes in
            buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + pendingStart, byteCount: count)
        }
        pendingStart += count
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 << 10)
            pendingStart = 0
        } else if pendingStart >= 64 << 10 && pendingStart * 2 >= pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return count
    }
}
