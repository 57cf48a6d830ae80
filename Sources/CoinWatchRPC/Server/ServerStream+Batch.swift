import CoinWatchMetrics

extension ServerStream {
    /// Writes this stream's messages one after another into its transport's output.
    ///
    /// A fan-out sends many small messages to each stream per loop iteration; the batch looks the call's output
    /// up once. On the native transport it writes each `Frame{message: Message{call_id, payload}}` (length prefix
    /// and envelope included) straight into the loop's output arena, where a stream's consecutive messages form
    /// one contiguous range; on any other transport each message goes to the call's sink. Valid only inside
    /// `withMessageBatch`, on the stream's loop.
    public struct MessageBatch {
        /// The native connection the frames go into; nil on other transports and when the call has ended.
        /// Unretained, so a send costs no reference counting: `withMessageBatch` holds the connection (and the
        /// call) for the batch's whole life, and the batch does not outlive it.
        let frames: Unmanaged<Connection>?
        /// The call, for other transports; nil when the call has ended: sends are dropped, and the batch
        /// reports itself not writable.
        let call: Unmanaged<ServerCall>?
        let callID: UInt64
        let sent: CounterCell

        init(call: ServerCall) {
            let live = !call.isFinished
            self.frames = live ? call.frameOutput.map { Unmanaged.passUnretained($0) } : nil
            self.call = live ? Unmanaged.passUnretained(call) : nil
            self.callID = call.id
            self.sent = call.sentMessages
        }

        /// Whether the transport takes output now (see `ServerStream.isWritable`).
        public var isWritable: Bool {
            if let frames { return frames._withUnsafeGuaranteedRef { $0.isWritable } }
            return call?._withUnsafeGuaranteedRef { $0.isWritable } ?? false
        }

        /// Sends one message made of `payload` followed by `suffix`, both copied.
        public func send(payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
            if let frames {
                sent.increment()
                frames._withUnsafeGuaranteedRef {
                    ServerConnection.writeMessageFrame(callID: callID, payload: payload, suffix: suffix, to: $0)
                }
            } else {
                call?._withUnsafeGuaranteedRef { $0.sendMessage(payload: payload, suffix: suffix) }
            }
        }
    }

    /// Runs `body` with a batch writer for this stream: the way to send many small messages in one go.
    /// Loop only; the batch must not be kept past `body`.
    public func withMessageBatch<Result>(_ body: (MessageBatch) throws -> Result) rethrows -> Result {
        let call = self.call
        let frames = call.isFinished ? nil : call.frameOutput
        return try withExtendedLifetime((call, frames)) {
            try body(MessageBatch(call: call))
        }
    }
}
