/// Where a request goes: the one routing decision HTTP/1.1 and HTTP/2 share.
///
/// RPC paths (`/coinwatch.v1.CoinWatch/GetSettings`) are told apart by content type, so several RPC protocols
/// share them: `application/grpc` (and `+proto`) is gRPC, which needs HTTP/2; `application/proto`,
/// `application/json` and `application/connect+…` are the Connect protocol's (not served yet: this is the
/// place its adapter is added). Everything else is an operator endpoint or 404.
enum HTTPRoute: Equatable {
    /// gRPC over HTTP/2.
    case grpc
    /// The Connect protocol (unary `application/proto|json`, streaming `application/connect+proto|json`).
    case connect
    case metrics
    case healthz
    case readyz
    /// A known path with a method it does not take (405, with the allowed ones).
    case methodNotAllowed(allowed: String)
    /// An RPC path with a content type no RPC protocol here speaks (415).
    case unsupportedMediaType(String)
    case notFound

    static func route(method: String, path: Substring, contentType: String?) -> HTTPRoute {
        switch path {
        case "/metrics", "/healthz", "/readyz":
            guard method == "GET" || method == "HEAD" else { return .methodNotAllowed(allowed: "GET, HEAD") }
            return path == "/metrics" ? .metrics : path == "/healthz" ? .healthz : .readyz
        default:
            break
        }
        // An RPC path: "/package.Service/Method".
        guard path.hasPrefix("/"), path.dropFirst().contains("/") else { return .notFound }
        let type = (contentType ?? "").lowercased()
        let mediaType = type.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces } ?? ""
        if mediaType == "application/grpc" || mediaType.hasPrefix("application/grpc+") {
            return .grpc
        }
        if mediaType == "application/proto" || mediaType == "application/json" || mediaType.hasPrefix("application/connect+") {
            return .connect
        }
        if method != "POST" { return .methodNotAllowed(allowed: "POST") }
        return .unsupportedMediaType(String(mediaType))
    }
}
