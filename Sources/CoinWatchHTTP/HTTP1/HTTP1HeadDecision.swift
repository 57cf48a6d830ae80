/// What an HTTP/1.1 request's head decides: where it goes, whether the connection stays open after it and, for a
/// Connect request, the call's route, metadata and CORS headers.
///
/// Kept by its `HTTP1Session` for the next request: a keep-alive client calling a method again repeats its head
/// byte for byte, and the parser hands back the strings of the previous request where the bytes are the same, so
/// the next head is recognised by comparing a few strings that share their storage, and routing runs once per
/// head rather than once per call. Every decision is a function of the head and of the server's fixed
/// configuration alone, so a head equal to the kept one decides the same. `Content-Length` is the one field left
/// out of the comparison: it frames the body and decides nothing here, and it changes with every body size.
final class HTTP1HeadDecision {
    let route: HTTPRoute
    let keepAlive: Bool
    /// The Connect request's head, when `route` is `.connect`.
    let connect: HTTPServer.ConnectHead?
    private let method: String
    private let target: String
    private let minorVersion: Int
    private let headers: [(name: String, value: String)]

    /// Heads with more fields than this are decided but not kept: comparing and copying them costs more than a
    /// usual head, and clients that send many fields tend to vary some of them.
    static let maxKeptFields = 16

    init(_ request: HTTP1Request, server: HTTPServer) {
        route = HTTPRoute.route(method: request.method, path: request.target.path,
                                contentType: request.header("content-type"))
        keepAlive = request.keepAlive
        connect = route == .connect
            ? server.connectHead(method: request.method, target: request.target, header: { request.header($0) },
                                 headers: request.headers)
            : nil
        method = request.method
        target = request.target.text
        minorVersion = request.minorVersion
        // A copy of its own: the request's array goes back to the parser to be refilled.
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(request.headers.count)
        headers.append(contentsOf: request.headers)
        self.headers = headers
    }

    /// Whether `request`'s head is this one's, but for `Content-Length`.
    func decides(_ request: HTTP1Request) -> Bool {
        guard request.headers.count == headers.count, request.minorVersion == minorVersion,
              request.method == method, request.target.text == target else { return false }
        for (kept, given) in zip(headers, request.headers) {
            guard kept.name == given.name else { return false }
            guard kept.value == given.value || kept.name == "content-length" else { return false }
        }
        return true
    }
}
