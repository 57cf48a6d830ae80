import Testing
@testable import CoinWatchHTTP

/// The routing decision HTTP/1.1 and HTTP/2 share: by path, method and content type.
@Suite struct HTTPRouteTests {
    @Test("RPC paths go to gRPC or Connect by content type, in any case and with parameters")
    func rpcPaths() {
        let path: Substring = "/coinwatch.v1.CoinWatch/GetSettings"
        for type in ["application/grpc", "application/grpc+proto", "Application/GRPC", "application/grpc; x=1",
                     "application/grpc ;x", " application/grpc"] {
            #expect(HTTPRoute.route(method: "POST", path: path, contentType: type) == .grpc, "\(type)")
        }
        for type in ["application/grpcx", "application/grp", "application/proto", "application/json",
                     "application/connect+json", ""] {
            #expect(HTTPRoute.route(method: "POST", path: path, contentType: type) == .connect, "\(type)")
        }
        #expect(HTTPRoute.route(method: "POST", path: path, contentType: nil) == .connect)
        #expect(HTTPRoute.route(method: "OPTIONS", path: path, contentType: nil) == .preflight)
    }

    @Test("operators' paths, the dashboard, and everything else")
    func otherPaths() {
        #expect(HTTPRoute.route(method: "GET", path: "/metrics", contentType: nil) == .metrics)
        #expect(HTTPRoute.route(method: "HEAD", path: "/healthz", contentType: nil) == .healthz)
        #expect(HTTPRoute.route(method: "POST", path: "/readyz", contentType: nil) == .methodNotAllowed(allowed: "GET, HEAD"))
        #expect(HTTPRoute.route(method: "GET", path: "/", contentType: nil) == .dashboard)
        #expect(HTTPRoute.route(method: "GET", path: "/nothing-here", contentType: nil) == .notFound)
        #expect(HTTPRoute.route(method: "GET", path: "", contentType: nil) == .notFound)
    }
}
