import CoinWatchConnect
import CoinWatchLogging
import CoinWatchRPC

/// Requests, after the session has parsed them: routing, gRPC's request rules, starting calls.
extension HTTP2Connection {
    /// The header block of a request is complete: route it.
    func headersComplete(_ id: Int32) {
        guard let stream = streams[id], case .pending = stream.kind else { return }
        let route = HTTPRoute.route(method: stream.method, path: stream.target.path,
                                    contentType: stream.contentType)
        if case .connect = route {
            stream.kind = .connect
            return
        }
        guard case .grpc = route else {
            stream.kind = .plain(route)
            return
        }
        if draining {
            refuse(stream, .unavailable, "the server is shutting down")
            return
        }
        guard stream.method == "POST" else {
            refuse(stream, .unimplemented, "gRPC calls are POST requests, not \(stream.method)")
            return
        }
        guard stream.te?.lowercased() == "trailers" else {
            refuse(stream, .internal, "a gRPC request must carry 'te: trailers'")
            return
        }
        if let encoding = stream.encoding, encoding != "identity" {
            // The messages may still come uncompressed (the flag byte says); compressed ones are refused then.
            server.logger.debug("gRPC request announces an encoding this server does not use",
                                ["peer": peer, "encoding": encoding])
        }
        // The table is searched with the target's bytes: a String of the method's path would be an allocation
        // per call.
        var target = stream.target.text
        let found = target.withUTF8 { bytes in
            server.dispatcher.methods.index(path: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.dropFirst())))
        }
        guard let index = found else {
            refuse(stream, .unimplemented, "unknown method '\(stream.target.text.dropFirst())'")
            return
        }
        if let text = stream.timeout, GRPCWire.timeoutNanos(text) == nil {
            refuse(stream, .internal, "malformed grpc-timeout '\(text)'")
            return
        }
        guard server.dispatcher.admits(liveCallsOnConnection: liveCalls) else {
            let refusal = server.dispatcher.refusal(liveCallsOnConnection: liveCalls)
            refuse(stream, refusal.code, refusal.message)
            return
        }
        stream.kind = .grpc(method: index)
    }

    /// A complete request message of `id`: the request of a unary or server-stream call starts it.
    func messageArrived(_ id: Int32, _ bytes: [UInt8]) {
        guard let stream = streams[id], case .grpc(let index) = stream.kind else { return }
        stream.messagesReceived += 1
        let takesMany = server.dispatcher.methods[index].takesManyRequests
        if stream.messagesReceived > 1 && takesMany {
            if let call = stream.call {
                bytes.withUnsafeBytes { server.dispatcher.receive(call, payload: $0) }
            }
            return
        }
        guard stream.messagesReceived == 1 else {
            if let call = stream.call {
                call.terminate(RPCError(code: .internal, message: "\(call.context.method) takes one request message"),
                               sendEnd: true)
            } else {
                refuse(stream, .internal, "\(server.dispatcher.methods[index].path) takes one request message")
            }
            return
        }
        let timeoutNanos = stream.timeout.flatMap(GRPCWire.timeoutNanos) ?? 0
        let context = server.dispatcher.context(index, metadata: stream.metadata, timeoutNanos: timeoutNanos, peer: peer,
                                                authToken: "", transport: HTTPServer.grpcTransportName,
                                                peerIdentity: connection.transform?.peerIdentity ?? "", eventLoop: eventLoop)
        let call = bytes.withUnsafeBytes { payload in
            server.dispatcher.start(index, id: UInt64(id), context: context, timeoutNanos: timeoutNanos, payload: payload,
                                    sink: self, eventLoop: eventLoop, metrics: metrics)
        }
        if let call {
            stream.call = call
            call.isRegistered = true
            liveCalls += 1
            if stream.requestEnded { server.dispatcher.requestsEnded(call) }
        }
    }

    func requestEnded(_ id: Int32) {
        guard let stream = streams[id] else { return }
        stream.requestEnded = true
        switch stream.kind {
        case .plain(let route):
            answerPlain(stream, route)
        case .connect:
            startConnect(stream)
        case .grpc(let index):
            if stream.messagesReceived == 0 && stream.call == nil && !stream.responseStarted {
                let detail = stream.reader?.isInsideMessage == true ? "ended inside a message" : "has no message"
                refuse(stream, .internal, "the request to \(server.dispatcher.methods[index].path) \(detail)")
            } else if stream.reader?.isInsideMessage == true, let call = stream.call {
                call.terminate(RPCError(code: .internal, message: "the request ended inside a message"), sendEnd: true)
            } else if let call = stream.call {
                server.dispatcher.requestsEnded(call)
            }
        case .pending, .refused:
            break
        }
    }

    func readerFailed(_ id: Int32, _ failure: GRPCMessageReader.Failure) {
        guard let stream = streams[id] else { return }
        let error: RPCError
        switch failure {
        case .tooLarge(let length):
            error = RPCError(code: .resourceExhausted,
                             message: "a request message of \(length) bytes exceeds the limit of \(server.dispatcher.maxMessageBytes) bytes")
        case .compressed:
            error = RPCError(code: .unimplemented, message: "compressed messages are not supported; send identity encoding")
        case .badFlag(let flag):
            error = RPCError(code: .internal, message: "message flag \(flag) is not 0 or 1")
        }
        if let call = stream.call {
            call.terminate(error, sendEnd: true)
        } else {
            refuse(stream, error.code, error.message)
        }
    }

    func streamClosed(_ id: Int32, _ code: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        stream.connect?.cancel()
        stream.connect = nil
        if let call = stream.call {
            // Reset by the client (or the stream went away before the call ended): the call is cancelled.
            let reason = code == NGHTTP2Session.noError ? "the stream closed" : "the client reset the stream (HTTP/2 error \(code))"
            call.terminate(RPCError(code: .cancelled, message: reason), sendEnd: false)
        }
    }

    // MARK: Answers

    /// A gRPC refusal before any message: Trailers-Only (one HEADERS frame with the status, ending the
    /// stream), and RST_STREAM(NO_ERROR) if the client is still sending its request, so it stops.
    func refuse(_ stream: HTTP2Stream, _ code: RPCError.Code, _ message: String) {
        stream.kind = .refused
        guard !stream.responseStarted, !stream.isClosed else { return }
        stream.responseStarted = true
        let headers = [(name: ":status", value: "200"), (name: "content-type", value: responseContentType(stream))]
            + GRPCWire.statusFields(code: code.rawValue, message: message)
        _ = session.respond(streamID: stream.id, headers: headers, body: false)
        stream.resetAfterResponse = true
        scheduleFlush()
    }

    /// A plain HTTP request over HTTP/2 (the operators' endpoints, the dashboard, a preflight, or a refusal).
    func answerPlain(_ stream: HTTP2Stream, _ route: HTTPRoute) {
        let response = server.plainResponse(route, method: stream.method, path: stream.target.path, header: { stream.header($0) })
        stream.kind = .refused
        respondWhole(stream, status: response.status, headers: response.headers, body: response.body)
    }

    /// A complete response: headers, then the body as the client's window allows (none for HEAD).
    func respondWhole(_ stream: HTTP2Stream, status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        guard !stream.responseStarted, !stream.isClosed else { return }
        stream.responseStarted = true
        let body = stream.method == "HEAD" ? [] : body
        let fields = [(name: ":status", value: String(status))] + headers.map { (name: $0.name.lowercased(), value: $0.value) }
            + [(name: "content-length", value: String(body.count))]
        stream.pending = body
        stream.bodyEnded = true
        _ = session.respond(streamID: stream.id, headers: fields, body: !body.isEmpty)
        scheduleFlush()
    }

    /// A Connect request has ended: start its call (or answer its refusal).
    func startConnect(_ stream: HTTP2Stream) {
        stream.kind = .refused
        let responder = HTTP2ConnectResponder(connection: self, stream: stream)
        if stream.bodyTooLarge {
            let failure = ConnectFailure(.resourceExhausted, "the request body exceeds \(server.maxConnectBodyBytes) bytes")
            let contentType = stream.contentType.flatMap(ConnectContentType.init(headerValue:))
                ?? ConnectContentType(codec: .json, isStreaming: false)
            ConnectExchange.refuse(failure, contentType: contentType, responder: responder,
                                   extraHeaders: server.configuration.cors.responseHeaders(origin: stream.header("origin")))
            return
        }
        let body = stream.body
        stream.body = []
        let head = server.connectHead(method: stream.method, target: stream.target, header: { stream.header($0) },
                                      headers: stream.headers)
        stream.connect = server.startConnect(
            head, body: body, responder: responder, eventLoop: eventLoop, peer: peer,
            peerIdentity: connection.transform?.peerIdentity ?? "")
    }

    static let grpcContentType = "application/grpc"
    static let grpcProtoContentType = "application/grpc+proto"

    /// The answer's content type: `application/grpc+proto` when the request named it, otherwise
    /// `application/grpc`.
    func responseContentType(_ stream: HTTP2Stream) -> String {
        asksForGRPCProto(stream) ? Self.grpcProtoContentType : Self.grpcContentType
    }

    /// Whether the request's content type begins with `application/grpc+proto`, in any case. Compared as bytes,
    /// without a lower-cased copy.
    func asksForGRPCProto(_ stream: HTTP2Stream) -> Bool {
        let expected = Self.grpcProtoContentType.utf8
        guard let type = stream.contentType?.utf8, type.count >= expected.count else { return false }
        return zip(type, expected).allSatisfy { HTTP1Parser.lowercase($0) == $1 }
    }
}
