import CoinWatchConnect
import CoinWatchProto
import CoinWatchRPC
import Testing

/// Routing of Connect requests from their head: methods, content types, GET queries, headers.
@Suite("Connect routing")
struct ConnectRouteTests {
    let methods = ConnectMethods()

    private func route(
        _ httpMethod: String = "POST", _ path: Substring = "/coinwatch.v1.CoinWatch/GetSettings", query: Substring? = nil,
        headers: [String: String] = ["content-type": "application/json"]
    ) -> ConnectRoute {
        ConnectRoute.route(httpMethod: httpMethod, path: path, query: query, header: { headers[$0] },
                           methods: methods, maxMessageBytes: 1000)
    }

    private func plan(_ route: ConnectRoute) -> ConnectCallPlan? {
        if case .call(let plan) = route { return plan }
        return nil
    }

    private func failure(_ route: ConnectRoute) -> (ConnectFailure, ConnectContentType)? {
        if case .fail(let failure, let type) = route { return (failure, type) }
        return nil
    }

    private func httpStatus(_ route: ConnectRoute) -> Int? {
        if case .httpError(let status, _, _) = route { return status }
        return nil
    }

    @Test("unary POST in either codec, with its deadline")
    func unaryPost() throws {
        let json = try #require(plan(route(headers: ["content-type": "application/json; charset=utf-8",
                                                     "connect-protocol-version": "1", "connect-timeout-ms": "250"])))
        #expect(json.contentType == ConnectContentType(codec: .json, isStreaming: false))
        #expect(json.timeoutNanos == 250_000_000)
        #expect(json.method.path == "coinwatch.v1.CoinWatch/GetSettings")
        let proto = try #require(plan(route(headers: ["content-type": "Application/Proto"])))
        #expect(proto.contentType.codec == .proto)
        #expect(proto.timeoutNanos == 0)
    }

    @Test("streaming POST needs the connect+ content types, and unary methods refuse them (415)")
    func streamingContentTypes() throws {
        let stream = try #require(plan(route("POST", "/coinwatch.v1.CoinWatch/StreamPrices",
                                             headers: ["content-type": "application/connect+json"])))
        #expect(stream.contentType.isStreaming)
        #expect(httpStatus(route("POST", "/coinwatch.v1.CoinWatch/StreamPrices")) == 415)
        #expect(httpStatus(route(headers: ["content-type": "application/connect+proto"])) == 415)
        #expect(httpStatus(route(headers: ["content-type": "text/plain"])) == 415)
        #expect(httpStatus(route(headers: [:])) == 415)
        #expect(httpStatus(route(headers: ["content-type": "application/json; charset=latin1"])) == 415)
        #expect(httpStatus(route(headers: ["content-type": "application/grpc"])) == 415)
        if case .httpError(_, _, let headers) = route(headers: ["content-type": "text/plain"]) {
            #expect(headers.first { $0.name == "Accept-Post" }?.value == "application/proto, application/json")
        }
    }

    @Test("unknown methods are 404, other HTTP methods 405")
    func methodsAndPaths() {
        #expect(httpStatus(route("POST", "/coinwatch.v1.CoinWatch/Nope")) == 404)
        #expect(httpStatus(route("POST", "/")) == 404)
        #expect(httpStatus(route("PUT")) == 405)
        #expect(httpStatus(route("GET", "/coinwatch.v1.CoinWatch/SaveSettings", query: "encoding=json&message=%7B%7D")) == 405)
        #expect(httpStatus(route("GET", "/coinwatch.v1.CoinWatch/StreamPrices", query: "encoding=json&message=%7B%7D")) == 405)
    }

    @Test("GET carries the message in the query, for methods without side effects")
    func get() throws {
        let json = try #require(plan(route("GET", query: "connect=v1&encoding=json&message=%7B%22deviceId%22%3A%22a+b%22%7D")))
        #expect(json.getMessage.map { String(decoding: $0, as: UTF8.self) } == #"{"deviceId":"a b"}"#)
        let binary = V1.GetSettingsRequest(deviceID: "phone").serializedBytes()
        var encoded = Base64Text.url(binary)
        let proto = try #require(plan(route("GET", query: "encoding=proto&base64=1&message=\(encoded)"[...])))
        #expect(proto.getMessage == binary)
        #expect(try proto.binaryRequest(body: UnsafeRawBufferPointer(start: nil, count: 0), maxMessageBytes: 100) == binary)
        encoded += "=="
        #expect(plan(route("GET", query: "encoding=proto&base64=1&message=\(encoded)"[...]))?.getMessage == binary)
        for bad: Substring in ["message=%7B%7D", "encoding=xml&message=x", "encoding=json", "connect=v2&encoding=json&message=1",
                               "encoding=json&message=%zz", "encoding=proto&base64=1&message=***",
                               "encoding=json&compression=gzip&message=1", "encoding=json&encoding=json&message=1"] {
            #expect(failure(route("GET", query: bad)) != nil, "accepted \(bad)")
        }
        #expect(failure(route("GET", query: "encoding=json&compression=gzip&message=1"))?.0.error.code == .unimplemented)
    }

    @Test("protocol version, compression and timeout headers are checked")
    func headers() {
        let badVersion = failure(route(headers: ["content-type": "application/json", "connect-protocol-version": "2"]))
        #expect(badVersion?.0.error.code == .invalidArgument)
        let compressed = failure(route(headers: ["content-type": "application/json", "content-encoding": "gzip"]))
        #expect(compressed?.0.error.code == .unimplemented)
        let streamCompressed = failure(route("POST", "/coinwatch.v1.CoinWatch/StreamPrices",
                                             headers: ["content-type": "application/connect+proto", "connect-content-encoding": "br"]))
        #expect(streamCompressed?.1.isStreaming == true)
        for bad in ["", "-1", "1.5", "12345678901", "ten"] {
            let result = failure(route(headers: ["content-type": "application/json", "connect-timeout-ms": bad]))
            #expect(result?.0.error.code == .invalidArgument, "accepted timeout \(bad)")
        }
        #expect(plan(route(headers: ["content-type": "application/json", "connect-timeout-ms": "0"]))?.timeoutNanos == 1)
        #expect(plan(route(headers: ["content-type": "application/json", "connect-timeout-ms": "9999999999"]))?.timeoutNanos
            == 9_999_999_999_000_000)
    }
}

/// URL-safe base64 without padding, written here independently of the code under test.
enum Base64Text {
    static func url(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group = 0
            for (offset, byte) in chunk.enumerated() { group |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { out.append(alphabet[(group >> (18 - 6 * position)) & 0x3F]) }
            index += 3
        }
        return out
    }
}
