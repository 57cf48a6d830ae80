import CoinWatchConnect
import CoinWatchRPC
import CoinWatchWeb

/// What HTTP/1.1 and HTTP/2 share of the Connect protocol, the CORS preflight and the dashboard: each takes a
/// complete request (head and body) and answers through a `ConnectHTTPResponder` or as an `HTTPResponse`. The
/// Connect call itself is a `ConnectCallSink` on the shared `CallDispatcher`, so it runs the same method table,
/// authorization, deadline and metrics (`transport="connect"`) as the native protocol and gRPC.
extension HTTPServer {
    /// The `transport` label of calls that came over the Connect protocol.
    static let connectTransportName = "connect"

    /// Request headers that are HTTP's or Connect's own, not call metadata.
    static func isConnectReserved(_ name: String) -> Bool {
        name.hasPrefix(":") || name.hasPrefix("connect-") || name.hasPrefix("content-") || name == "host"
            || name == "connection" || name == "keep-alive" || name == "transfer-encoding" || name == "te"
            || name == "accept" || name == "accept-encoding" || name == "user-agent" || name == "origin"
            || name == "referer" || name == "upgrade" || name.hasPrefix("sec-") || name.hasPrefix("access-control-")
    }

    /// The largest request body taken for a Connect call: a message at the limit in its envelope. Larger
    /// bodies are refused by the HTTP layer (HTTP/1.1 413, HTTP/2 `resource_exhausted`).
    var maxConnectBodyBytes: Int { max(dispatcher.maxMessageBytes + 5, 4 << 20) }

    /// What a Connect request's head decides before its body is looked at: the route, the CORS headers of its
    /// answer and, for a call, the metadata the method may read. A function of the head and of this server's fixed
    /// configuration only, so a connection whose client repeats its head may keep it for the next request
    /// (`HTTP1Session` does).
    struct ConnectHead {
        let route: ConnectRoute
        let cors: [(name: String, value: String)]
        /// Request headers that are not HTTP's or Connect's own, repeated ones joined as HTTP joins them; empty
        /// unless `route` is a call.
        let metadata: [String: String]
    }

    /// Decides a Connect request's `ConnectHead`.
    ///
    /// - Parameters:
    ///   - header: the value of a request header by lower-case name, nil when absent.
    ///   - headers: every request header (lower-case names), for the call's metadata.
    func connectHead(
        method: String, target: RequestTarget, header: (String) -> String?, headers: [(name: String, value: String)]
    ) -> ConnectHead {
        let cors = configuration.cors.responseHeaders(origin: header("origin"))
        let route = ConnectRoute.route(httpMethod: method, path: target.path, query: target.query, header: header,
                                       methods: connectMethods, maxMessageBytes: dispatcher.maxMessageBytes)
        var metadata: [String: String] = [:]
        if case .call = route {
            for (name, value) in headers where !Self.isConnectReserved(name) {
                metadata[name] = metadata[name].map { $0 + "," + value } ?? value
            }
        }
        return ConnectHead(route: route, cors: cors, metadata: metadata)
    }

    /// Starts the call of a Connect request whose body has fully arrived, or answers its refusal.
    ///
    /// - Returns: the call's sink while the call runs (the transport cancels it when the client goes away and
    ///   tells it when output drains); nil when the request was answered at once.
    func startConnect(
        _ head: ConnectHead, body: [UInt8], responder: any ConnectHTTPResponder, eventLoop: EventLoop, peer: String,
        peerIdentity: String
    ) -> ConnectCallSink? {
        let cors = head.cors
        switch head.route {
        case .httpError(let status, let failure, let extra):
            ConnectExchange.refuse(status: status, failure: failure, headers: extra + cors, responder: responder)
            return nil
        case .fail(let failure, let contentType):
            ConnectExchange.refuse(failure, contentType: contentType, responder: responder, extraHeaders: cors)
            return nil
        case .call(let plan):
            let maxMessageBytes = dispatcher.maxMessageBytes
            let request = Result { () throws(ConnectFailure) in
                try plan.binaryRequest(body: body, maxMessageBytes: maxMessageBytes)
            }
            switch request {
            case .failure(let failure):
                ConnectExchange.refuse(failure, contentType: plan.contentType, responder: responder, extraHeaders: cors)
                return nil
            case .success(let request):
                let sink = ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: connect,
                                                 eventLoop: eventLoop, metadata: head.metadata, peer: peer,
                                                 peerIdentity: peerIdentity, responder: responder, extraHeaders: cors)
                return sink.call == nil ? nil : sink
            }
        }
    }

    /// A request this layer answers whole: the operators' endpoints, a CORS preflight, the dashboard's files,
    /// and refusals. `route` is never `.connect` or `.grpc` here.
    func plainResponse(
        _ route: HTTPRoute, method: String, path: Substring, header: (String) -> String?
    ) -> HTTPResponse {
        switch route {
        case .metrics, .healthz, .readyz:
            return endpoints.response(route)
        case .preflight:
            let answer = configuration.cors.preflight(origin: header("origin"),
                                                      requestMethod: header("access-control-request-method"))
            return HTTPResponse(status: answer.status, headers: answer.headers)
        case .dashboard:
            guard let answer = DashboardAssets.response(path: path, ifNoneMatch: header("if-none-match")) else {
                return .text(404, "no such path: \(path)")
            }
            return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.body)
        case .methodNotAllowed(let allowed):
            return .text(405, "method \(method) is not allowed here; use \(allowed)", headers: [("allow", allowed)])
        case .grpc:
            return .text(415, "gRPC needs HTTP/2: call this path with a gRPC client (plaintext HTTP/2 with prior "
                         + "knowledge, as grpcurl -plaintext does) on this same port, or use the Connect protocol",
                         headers: [("accept-post", Self.connectContentTypes)])
        case .connect, .notFound:
            return .text(404, "no such path: \(path) (the dashboard is at /; try /metrics, /healthz or /readyz)")
        }
    }

    /// Every content type the Connect protocol takes on RPC paths.
    static let connectContentTypes = "application/proto, application/json, application/connect+proto, application/connect+json"
}
