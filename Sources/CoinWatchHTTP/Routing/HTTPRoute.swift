import CoinWatchWeb

/// Where a request goes: the one routing decision HTTP/1.1 and HTTP/2 share.
///
/// RPC paths (`/coinwatch.v1.CoinWatch/GetSettings`) are told apart by content type, so several RPC protocols
/// share them: `application/grpc` (and `+proto`) is gRPC, which needs HTTP/2; everything else on an RPC path
/// is the Connect protocol's (`application/proto|json` unary POSTs, `application/connect+proto|json` streams,
/// GETs with the message in the query), whose own routing answers 404/405/415 the way Connect clients read;
/// `OPTIONS` on an RPC path is a browser's CORS preflight. Other paths are the operators' endpoints, the web
/// dashboard's files, or 404.
enum HTTPRoute: Equatable {
    /// gRPC over HTTP/2.
    case grpc
    /// The Connect protocol (unary `application/proto|json`, streaming `application/connect+proto|json`, GET).
    case connect
    /// A CORS preflight (`OPTIONS`) for an RPC path.
    case preflight
    /// The web dashboard's page or one of its files.
    case dashboard
    case metrics
    case healthz
    case readyz
    /// A known path with a method it does not take (405, with the allowed ones).
    case methodNotAllowed(allowed: String)
    case notFound

    /// Routing runs once per request, so it reads the path and the content type as bytes: no copies, no
    /// lower-cased strings.
    static func route(method: String, path: Substring, contentType: String?) -> HTTPRoute {
        switch path {
        case "/metrics", "/healthz", "/readyz":
            guard method == "GET" || method == "HEAD" else { return .methodNotAllowed(allowed: "GET, HEAD") }
            return path == "/metrics" ? .metrics : path == "/healthz" ? .healthz : .readyz
        default:
            break
        }
        // An RPC path: "/package.Service/Method".
        let slash = UInt8(ascii: "/")
        guard path.utf8.first == slash, path.utf8.dropFirst().contains(slash) else {
            guard DashboardAssets.asset(atPath: String(path)) != nil else { return .notFound }
            guard method == "GET" || method == "HEAD" else { return .methodNotAllowed(allowed: "GET, HEAD") }
            return .dashboard
        }
        if method == "OPTIONS" { return .preflight }
        return isGRPC(contentType: contentType) ? .grpc : .connect
    }

    /// Whether a content type is gRPC's: media type `application/grpc` or `application/grpc+…`, in any case,
    /// with or without parameters.
    static func isGRPC(contentType: String?) -> Bool {
        guard let contentType else { return false }
        var bytes = contentType.utf8.makeIterator()
        var next = bytes.next()
        while next == 0x20 || next == 0x09 { next = bytes.next() }
        for expected in "application/grpc".utf8 {
            guard let byte = next, HTTP1Parser.lowercase(byte) == expected else { return false }
            next = bytes.next()
        }
        guard let next else { return true }
        return next == UInt8(ascii: "+") || next == UInt8(ascii: ";") || next == 0x20 || next == 0x09
    }
}
