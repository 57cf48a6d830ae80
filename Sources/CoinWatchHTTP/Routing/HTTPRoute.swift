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
        var contiguous = path
        guard contiguous.withUTF8({ $0.first == slash && $0.dropFirst().contains(slash) }) else {
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
        guard var contentType else { return false }
        return contentType.withUTF8 { bytes in
            var index = 0
            while index < bytes.count && (bytes[index] == 0x20 || bytes[index] == 0x09) { index += 1 }
            let expected: StaticString = "application/grpc"
            guard bytes.count - index >= expected.utf8CodeUnitCount else { return false }
            for offset in 0..<expected.utf8CodeUnitCount {
                guard HTTP1Parser.lowercase(bytes[index + offset]) == expected.utf8Start[offset] else { return false }
            }
            index += expected.utf8CodeUnitCount
            guard index < bytes.count else { return true }
            let next = bytes[index]
            return next == UInt8(ascii: "+") || next == UInt8(ascii: ";") || next == 0x20 || next == 0x09
        }
    }
}
