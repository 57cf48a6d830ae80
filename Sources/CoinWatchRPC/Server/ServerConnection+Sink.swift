/// The native transport as a call's sink: `Message` and `End` frames written straight into the loop's output
/// arena, one call table per connection, writability from the connection's watermarks.
extension ServerConnection: CallSink {
    func answer(callID: UInt64, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        sendEnd(callID: callID, code: code, message: message, payload: payload)
    }

    func send(_ call: ServerCall, payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) {
        Self.writeMessageFrame(callID: call.id, payload: payload, suffix: suffix, to: connection)
    }

    func end(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        forget(call)
        guard state != .closed else { return }
        sendEnd(callID: call.id, code: code, message: message, payload: payload)
        if state == .draining { closeWhenDrained() }
    }

    func forget(_ call: ServerCall) {
        if call.isRegistered {
            call.isRegistered = false
            calls.removeValue(forKey: call.id)
        }
    }

    func isWritable(_ call: ServerCall) -> Bool { connection.isWritable }

    func queuedBytes(_ call: ServerCall) -> Int { connection.queuedBytes }
}
