extension ServerStream {
    /// Writes this stream's messages one after another into its connection's output.
    ///
    /// A fan-out sends many small messages to each stream per loop iteration; the batch looks the connection up
    /// once and writes each `Frame{message: Message{call_id, payload}}` (length prefix and envelope included)
    /// straight into the loop's output arena, where a stream's consecutive messages form one contiguous range.
    /// Valid only inside `withMessageBatch`, on the stream's loop.
    public struct MessageBatch {
        /// nil when the call has ended: sends are dropped, and the batch reports itself not writable.
        /// Unretained, so a send costs no reference counting: `withMessageBatch` holds the connection for the
        /// batch's whole life, and the batch does not outlive it.
        let connection: Unmanaged<Connection>?
        let callID: UInt64

        init(connection: Connection?, callID: UInt64) {
            self.connection = connection.map { Unmanaged.passUnretained($0) }
            self.callID = callID
        }

        /// Whether the connection is below its high watermark (see `ServerStream.isWritable`).
        public var isWritable: Bool {
            connection?._withUnsafeGuaranteedRef { $0.isWritable } ?? false
        }

        /// Sends one message made of `payload` followed by `suffix`, both copied.
        public func send(payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
            connection?._withUnsafeGuaranteedRef {
                ServerConnection.writeMessageFrame(callID: callID, payload: payload, suffix: suffix, to: $0)
            }
        }
    }

    /// Runs `body` with a batch writer for this stream: the way to send many small messages in one go.
    /// Loop only; the batch must not be kept past `body`.
    public func withMessageBatch<Result>(_ body: (MessageBatch) throws -> Result) rethrows -> Result {
        let call = self.call
        let connection = call.isFinished ? nil : call.connection?.connection
        return try withExtendedLifetime(connection) {
            try body(MessageBatch(connection: connection, callID: call.id))
        }
    }
}
