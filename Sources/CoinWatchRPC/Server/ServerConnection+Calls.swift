extension ServerConnection {
    /// Checks a new call id against the protocol's rules and the connection's limits;
    /// false after answering the call with the error `End` (or, for the id of a live call,
    /// failing the connection).
    func admit(id: UInt64) -> Bool {
        guard id != 0 else {
            sendEnd(callID: 0, code: .invalidArgument, message: "call id 0 is reserved")
            return false
        }
        guard calls.isEmpty || calls[id] == nil else {
            // An End for this id would read as the live call's own end, so, as HTTP/2 does for a reused
            // stream id, the reuse is a connection error.
            fail(.invalidArgument, "call id \(id) is already in use by a live call")
            return false
        }
        guard state == .ready else {
            sendEnd(callID: id, code: .unavailable, message: "the server is shutting down; no new calls on this connection")
            return false
        }
        guard dispatcher.admits(liveCallsOnConnection: calls.count) else {
            let refusal = dispatcher.refusal(liveCallsOnConnection: calls.count)
            sendEnd(callID: id, code: refusal.code, message: refusal.message)
            return false
        }
        return true
    }

    /// Starts a call to method `index` of the dispatcher's table (nil when no method has that `path`).
    func startCall(id: UInt64, method index: Int?, path: String, timeoutMs: UInt64, metadata: [String: String],
                   payload: UnsafeRawBufferPointer) {
        guard admit(id: id) else { return }
        guard let index else {
            sendEnd(callID: id, code: .unimplemented, message: "unknown method '\(path)'")
            return
        }
        if !metadata.isEmpty, let key = metadata.keys.sorted().first(where: { $0.utf8.contains { (65...90).contains($0) } }) {
            // Keys are lowercase, as in HTTP/2: a key a server looks up could otherwise be sent in a spelling it
            // never finds, and the call would fail for a reason the caller cannot see.
            sendEnd(callID: id, code: .invalidArgument,
                    message: "metadata key '\(key)' is not lowercase; metadata keys are lowercase ('\(key.lowercased())')")
            return
        }
        highestCallID = max(highestCallID, id)
        let (nanos, overflow) = Int64(clamping: timeoutMs).multipliedReportingOverflow(by: 1_000_000)
        let timeoutNanos = overflow ? Int64.max : nanos
        let context = dispatcher.context(index, metadata: metadata, timeoutNanos: timeoutNanos, peer: peer,
                                         authToken: authToken, transport: ServerShared.nativeTransportName,
                                         peerIdentity: peerIdentity, eventLoop: eventLoop)
        let call = dispatcher.start(
            index, id: id, context: context, timeoutNanos: timeoutNanos, payload: payload, sink: self,
            frameOutput: connection, eventLoop: eventLoop, metrics: metrics)
        if let call {
            calls[id] = call
            call.isRegistered = true
            // A native Call carries one request: for a method that takes many, the requests have ended.
            dispatcher.requestsEnded(call)
        } else if state == .draining {
            closeWhenDrained()
        }
    }

    /// The inline method at `index` of the dispatcher's table as this connection calls it;
    /// nil when that method is not inline.
    func inlineMethod(_ index: Int) -> InlineMethod? {
        if inlineMethods.isEmpty {
            inlineMethods = Array(repeating: nil, count: dispatcher.methods.count)
        }
        if let method = inlineMethods[index] { return method }
        let method = dispatcher.methods[index]
        guard case .inline(let handler) = method.kind else { return nil }
        let context = ServerContext(method: method.path, metadata: [:], deadline: nil, peer: peer, authToken: authToken,
                                    transport: ServerShared.nativeTransportName, peerIdentity: peerIdentity,
                                    eventLoop: eventLoop)
        let inline = InlineMethod(handler: handler, context: context)
        inlineMethods[index] = inline
        return inline
    }

    func terminateCalls(sendEnd: Bool, reason: RPCError) {
        guard !calls.isEmpty else { return }
        for call in Array(calls.values) {
            call.terminate(reason, sendEnd: sendEnd)
        }
    }
}
