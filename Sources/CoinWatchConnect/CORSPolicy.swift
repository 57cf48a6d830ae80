/// Which other origins' pages may call the server from a browser (`--cors-origin`, repeatable; none by
/// default, so only pages served by coinwatchd itself — the dashboard — can).
///
/// A browser sends `Origin` on cross-origin calls and asks first with a preflight `OPTIONS` for anything but
/// the simplest requests (every Connect call with its content type and headers is preflighted). An allowed
/// origin gets its own origin echoed back (never `*` with credentials), the methods and headers Connect uses,
/// and may read the response; anything else gets no CORS headers, and the browser keeps the answer from it.
public struct CORSPolicy: Sendable, Hashable {
    /// Exact origins (`https://example.com`, scheme, host and port as the browser sends them), or `*` for any.
    public let allowedOrigins: Set<String>

    /// Request headers a Connect client sends.
    public static let allowedHeaders =
        "Content-Type, Connect-Protocol-Version, Connect-Timeout-Ms, Connect-Accept-Encoding, "
        + "Connect-Content-Encoding, Accept-Encoding, Content-Encoding, Authorization"

    /// Response headers a Connect client reads.
    public static let exposedHeaders = "Content-Encoding, Connect-Content-Encoding, Connect-Accept-Encoding"

    public init(allowedOrigins: some Sequence<String>) {
        self.allowedOrigins = Set(allowedOrigins)
    }

    public func allows(origin: String) -> Bool {
        allowedOrigins.contains("*") || allowedOrigins.contains(origin)
    }

    /// The answer to a preflight `OPTIONS`: 204 with the allowance for an allowed origin asking for a method the
    /// server serves (POST or GET), 403 with no CORS headers otherwise.
    public func preflight(origin: String?, requestMethod: String?) -> (status: Int, headers: [(name: String, value: String)]) {
        guard let origin, allows(origin: origin), let requestMethod, requestMethod == "POST" || requestMethod == "GET" else {
            return (403, [("Vary", "Origin")])
        }
        return (204, [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Methods", "POST, GET"),
            ("Access-Control-Allow-Headers", Self.allowedHeaders),
            ("Access-Control-Max-Age", "7200"),
            ("Vary", "Origin"),
        ])
    }

    /// Headers added to an actual response for `origin` (nothing for a same-origin call or a refused origin).
    public func responseHeaders(origin: String?) -> [(name: String, value: String)] {
        guard let origin, allows(origin: origin) else { return [] }
        return [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Expose-Headers", Self.exposedHeaders),
            ("Vary", "Origin"),
        ]
    }
}
