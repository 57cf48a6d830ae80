/// Where one call's output goes: the transport under the call.
///
/// A `ServerCall` knows nothing of frames, HTTP/2 streams or trailers; it hands what its handler produces to
/// its sink, and the sink writes it the way its protocol does: the native connection writes `Message` and `End`
/// frames straight into its loop's output arena, the gRPC adapter writes length-prefixed messages into an
/// HTTP/2 stream and ends it with trailers. Every method of every transport thereby runs through the same
/// handlers, responders, writers and streams.
///
/// Loop-confined: every method is called on the call's event loop. A sink also owes its calls one thing the
/// other way: when a call that was not writable may write again, it calls `ServerCall.becameWritable()`
/// (the native connection does so when its output falls to the low watermark; an HTTP/2 stream when its
/// flow-control window and the connection's output allow).
package protocol CallSink: AnyObject {
    /// Writes the whole answer of a call that never became a `ServerCall`: an inline method's response, or a
    /// refusal before the handler ran (unknown method, limits, authorization). `payload` is the response
    /// message when `code` is OK.
    func answer(callID: UInt64, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer)

    /// Writes one response message of `call`: `payload` followed by `suffix` (a per-stream tail, such as a
    /// price update's sequence number; protobuf concatenation merges it on decode).
    func send(_ call: ServerCall, payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer)

    /// Writes the end of `call` (its status, and for a unary call its one response in `payload`) and stops
    /// tracking it. Called once per call, unless `forget` is called instead.
    func end(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer)

    /// Stops tracking `call` without writing anything: its connection is gone or the peer can no longer be told.
    func forget(_ call: ServerCall)

    /// Whether `call` may write now without piling output up: false above the connection's high watermark
    /// (and, for HTTP/2, while the stream's window is closed and its pending bytes are over their bound).
    func isWritable(_ call: ServerCall) -> Bool

    /// Bytes written for `call` (or its connection) and not yet taken by the peer.
    func queuedBytes(_ call: ServerCall) -> Int
}
