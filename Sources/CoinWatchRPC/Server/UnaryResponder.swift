public import CoinWatchProto

/// Answers one unary call, once, from any thread.
///
/// The first of `succeed`/`fail` wins; later answers, and answers after the
/// call was cancelled or timed out, are dropped, because the client has already
/// been sent the call's only `End`.
public struct UnaryResponder<Response: WireMessage>: Sendable {
    let call: ServerCall

    /// The call's context (deadline, metadata, cancellation).
    public var context: ServerContext { call.context }

    public func succeed(_ response: Response) {
        if call.eventLoop.inEventLoop {
            let bytes = response.serializedBytes()
            bytes.withUnsafeBytes { call.finish(status: .ok, message: "", payload: $0) }
        } else {
            let bytes = response.serializedBytes()
            let call = self.call
            call.eventLoop.execute {
                bytes.withUnsafeBytes { call.finish(status: .ok, message: "", payload: $0) }
            }
        }
    }

    /// Answers with a response already in its wire form: for a producer that holds the encoded message anyway
    /// (the settings writer has the record it just wrote), so the answer costs a copy instead of an encoding.
    /// The bytes are not checked against `Response`.
    public func succeed(encodedResponse bytes: [UInt8]) {
        let call = self.call
        call.onLoop {
            bytes.withUnsafeBytes { call.finish(status: .ok, message: "", payload: $0) }
        }
    }

    /// `succeed(encodedResponse:)`, running `ifEnded` on the event loop instead when the call had already ended
    /// (cancelled, past its deadline, its connection gone) and so the answer could not be sent: for an answer
    /// that hands something over only once, such as a device's secret, which is then taken back.
    public func succeed(encodedResponse bytes: [UInt8], ifEnded: @escaping @Sendable () -> Void) {
        let call = self.call
        let answer: @Sendable () -> Void = {
            guard !call.isFinished else {
                ifEnded()
                return
            }
            bytes.withUnsafeBytes { call.finish(status: .ok, message: "", payload: $0) }
        }
        if call.eventLoop.inEventLoop {
            answer()
        } else if !call.eventLoop.execute(answer) {
            // The loop has stopped (the server shut down), and the call with it: the answer cannot be sent.
            ifEnded()
        }
    }

    public func fail(_ error: RPCError) {
        let call = self.call
        call.onLoop { call.finish(error) }
    }

    /// Runs `handler` (on the event loop) if the call ends before it is answered:
    /// cancelled by the client, past its deadline, or its connection gone.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let call = self.call
        call.onLoop { call.addTerminationHandler { _ in handler() } }
    }

    func typed<Other: WireMessage>(_ type: Other.Type) -> UnaryResponder<Other> {
        UnaryResponder<Other>(call: call)
    }
}
