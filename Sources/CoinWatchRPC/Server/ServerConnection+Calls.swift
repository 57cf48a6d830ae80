import Synchronization

extension ServerConnection {
    /// Checks a new call id against the protocol's rules and the connection's limits;
    /// false after answering the call with the error `End`.
    func admit(id: UInt64) -> Bool {
        guard id != 0 else {
            sendEnd(callID: 0, code: .invalidArgument, message: "call id 0 is reserved")
            return false
        }
        guard calls.isEmpty || calls[id] == nil else {
            sendEnd(callID: id, code: .invalidArgument, message: "call id \(id) is already in use")
            return false
        }
        guard state == .ready else {
            sendEnd(callID: id, code: .unavailable, message: "the server is shutting down; no new calls on this connection")
            return false
        }
        guard calls.count < configuration.maxConcurrentCallsPerConnection else {
            sendEnd(callID: id, code: .resourceExhausted,
                    message: "more than \(configuration.maxConcurrentCallsPerConnection) calls in flight on this connection")
            return false
        }
        return true
    }

    /// Starts a call to `method` (nil when no method has that `path`).
    func startCall(id: UInt64, method: RPCMethod?, path: String, timeoutMs: UInt64, metadata: [String: String],
                   payload: UnsafeRawBufferPointer) {
        guard admit(id: id) else { return }
        guard let method else {
            sendEnd(callID: id, code: .unimplemented, message: "unknown method '\(path)'")
            return
        }
        var deadline: ContinuousClock.Instant?
        if timeoutMs > 0 {
            deadline = .now + .milliseconds(Int64(clamping: timeoutMs))
        }
        let context = ServerContext(
            method: method.path, metadata: metadata, deadline: deadline, peer: peer, authToken: authToken)
        let call: ServerCall
        switch method.kind {
        case .inline(let handler):
            // Done before a deadline could pass: no call object, no timer.
            runInline(id: id, handler: handler, context: context, payload: payload)
            return
        case .unary(let handler):
            call = startedCall(id: id, context: context, isStreaming: false)
            handler(payload, UnaryResponder(call: call))
        case .serverStream(let handler):
            call = startedCall(id: id, context: context, isStreaming: true)
            handler(payload, ServerStream(call: call))
        }
        // Answered before the handler returned: nothing to track.
        guard !call.isFinished else { return }
        calls[id] = call
        call.isRegistered = true
        if timeoutMs > 0 {
            let timeout = timeoutMs
            // Unowned: forgetCall cancels this timer whenever the call ends.
            call.deadlineTimer = eventLoop.scheduleTimer(after: .milliseconds(Int64(clamping: timeout))) { [unowned call] in
                call.deadlineTimer = nil
                call.terminate(RPCError(code: .deadlineExceeded, message: "deadline of \(timeout) ms exceeded"), sendEnd: true)
            }
        }
    }

    private func startedCall(id: UInt64, context: ServerContext, isStreaming: Bool) -> ServerCall {
        highestCallID = max(highestCallID, id)
        loopTable.startedCalls.add(1, ordering: .relaxed)
        shared.counters.liveCalls.add(1, ordering: .relaxed)
        return ServerCall(id: id, connection: self, context: context, isStreaming: isStreaming)
    }

    /// Runs an admitted inline call and sends its `End`. Such a call starts and ends
    /// within this function, so it is counted as started but never as live.
    func runInline(id: UInt64, handler: RPCMethod.InlineHandler, context: ServerContext,
                   payload: UnsafeRawBufferPointer) {
        highestCallID = max(highestCallID, id)
        loopTable.startedCalls.add(1, ordering: .relaxed)
        var answered = false
        do throws(RPCError) {
            try handler(payload, context) { response in
                guard !answered else { return }
                answered = true
                sendEnd(callID: id, code: .ok, message: "", payload: response)
            }
            if !answered {
                sendEnd(callID: id, code: .internal, message: "the handler of \(context.method) returned without an answer")
            }
        } catch {
            if !answered { sendEnd(callID: id, code: error.code, message: error.message) }
        }
        if state == .draining { closeWhenDrained() }
    }

    /// The inline method at `index` of `shared.methodList` as this connection calls it;
    /// nil when that method is not inline.
    func inlineMethod(_ index: Int) -> InlineMethod? {
        if inlineMethods.isEmpty {
            inlineMethods = Array(repeating: nil, count: shared.methodList.count)
        }
        if let method = inlineMethods[index] { return method }
        let method = shared.methodList[index]
        guard case .inline(let handler) = method.kind else { return nil }
        let context = ServerContext(method: method.path, peer: peer, authToken: authToken)
        let inline = InlineMethod(handler: handler, context: context)
        inlineMethods[index] = inline
        return inline
    }

    /// Called by a call finishing: sends its `End` and forgets it.
    func endCall(_ call: ServerCall, code: RPCError.Code, message: String, payload: UnsafeRawBufferPointer) {
        forgetCall(call)
        guard state != .closed else { return }
        sendEnd(callID: call.id, code: code, message: message, payload: payload)
        if state == .draining { closeWhenDrained() }
    }

    /// Removes a call from the table without sending anything.
    func forgetCall(_ call: ServerCall) {
        shared.counters.liveCalls.subtract(1, ordering: .relaxed)
        if let timer = call.deadlineTimer {
            _ = eventLoop.cancelTimer(timer)
            call.deadlineTimer = nil
        }
        if call.isRegistered {
            call.isRegistered = false
            calls.removeValue(forKey: call.id)
        }
    }

    func terminateCalls(sendEnd: Bool, reason: RPCError) {
        guard !calls.isEmpty else { return }
        for call in Array(calls.values) {
            call.terminate(reason, sendEnd: sendEnd)
        }
    }
}
