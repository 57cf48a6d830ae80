public import CoinWatchProto
import CoinWatchRPC

/// What a Connect request asks for, decided from its head (method, path, query, headers) before its body is
/// read: the call to make, or the refusal to answer with.
public enum ConnectRoute: Sendable {
    /// A call to make; its request comes from the body, or from the query of a GET.
    case call(ConnectCallPlan)
    /// Refused in the protocol's own way for `contentType`: a unary error (mapped HTTP status, JSON body) or,
    /// for a streaming call, HTTP 200 with an end-of-stream message carrying the error.
    case fail(ConnectFailure, contentType: ConnectContentType)
    /// Refused at the HTTP level (404 unknown method, 405 wrong HTTP method, 415 unsupported content type),
    /// with a Connect error JSON body and these extra headers (`Allow`, `Accept-Post`).
    case httpError(status: Int, failure: ConnectFailure, headers: [(name: String, value: String)])

    /// Routes a request.
    ///
    /// - Parameters:
    ///   - httpMethod: `POST`, `GET`, …
    ///   - path: the path without the query (`/coinwatch.v1.CoinWatch/GetSettings`).
    ///   - query: the query string without `?`, if any.
    ///   - header: the value of a request header (names compared case-insensitively), nil when absent.
    public static func route(
        httpMethod: String, path: Substring, query: Substring?, header: (String) -> String?,
        methods: ConnectMethods, maxMessageBytes: Int
    ) -> ConnectRoute {
        guard let method = methods[path] else {
            return .httpError(status: 404, failure: ConnectFailure(.unimplemented, "no method \(path.dropFirst())"),
                              headers: [])
        }
        var contentType: ConnectContentType
        var getMessage: [UInt8]?
        switch httpMethod {
        case "POST":
            guard let value = header("content-type"), let parsed = ConnectContentType(headerValue: value),
                  parsed.isStreaming == method.isServerStreaming
            else {
                let expected = method.isServerStreaming
                    ? "application/connect+proto or application/connect+json"
                    : "application/proto or application/json"
                let given = header("content-type").map { "content type \"\($0)\"" } ?? "no content type"
                return .httpError(
                    status: 415,
                    failure: ConnectFailure(.unknown, "\(method.path) takes \(expected), not \(given)"),
                    headers: [("Accept-Post", method.isServerStreaming
                        ? "application/connect+proto, application/connect+json" : "application/proto, application/json")]
                )
            }
            contentType = parsed
        case "GET":
            guard method.hasNoSideEffects, !method.isServerStreaming else {
                return .httpError(status: 405, failure: ConnectFailure(.unknown, "\(method.path) is served over POST only"),
                                  headers: [("Allow", "POST")])
            }
            do throws(ConnectFailure) {
                let parsed = try ConnectGetQuery(query ?? "", maxMessageBytes: maxMessageBytes)
                contentType = ConnectContentType(codec: parsed.codec, isStreaming: false)
                getMessage = parsed.message
            } catch {
                return .fail(error, contentType: ConnectContentType(codec: .json, isStreaming: false))
            }
        default:
            return .httpError(status: 405, failure: ConnectFailure(.unknown, "\(httpMethod) is not allowed on \(method.path)"),
                              headers: [("Allow", method.hasNoSideEffects && !method.isServerStreaming ? "POST, GET" : "POST")])
        }
        if let version = header("connect-protocol-version"), version != "1" {
            return .fail(ConnectFailure(.invalidArgument, "Connect-Protocol-Version \(version) is not supported (1)"),
                         contentType: contentType)
        }
        let encodingHeader = contentType.isStreaming ? "connect-content-encoding" : "content-encoding"
        if let encoding = header(encodingHeader), encoding.lowercased() != "identity" {
            return .fail(ConnectFailure(.unimplemented, "\(encodingHeader) \(encoding) is not supported (identity)"),
                         contentType: contentType)
        }
        var timeoutNanos: Int64 = 0
        if let value = header("connect-timeout-ms") {
            guard let nanos = ConnectTimeout.nanoseconds(value) else {
                return .fail(ConnectFailure(.invalidArgument, "Connect-Timeout-Ms \"\(value)\" is not 1 to 10 digits"),
                             contentType: contentType)
            }
            timeoutNanos = nanos
        }
        return .call(ConnectCallPlan(method: method, contentType: contentType, timeoutNanos: timeoutNanos,
                                     getMessage: getMessage))
    }
}

/// The methods served over Connect, by path.
public struct ConnectMethods: Sendable {
    private let byPath: [Substring: JSONMethodCodec]

    /// Every method of the schema by default.
    public init(_ codecs: [JSONMethodCodec] = V1.jsonMethodCodecs) {
        var byPath: [Substring: JSONMethodCodec] = [:]
        for codec in codecs { byPath["/" + codec.path] = codec }
        self.byPath = byPath
    }

    /// The method at an HTTP path (`/coinwatch.v1.CoinWatch/GetSettings`).
    public subscript(path: Substring) -> JSONMethodCodec? { byPath[path] }
}
