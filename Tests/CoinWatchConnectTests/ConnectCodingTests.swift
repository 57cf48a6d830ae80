import CoinWatchConnect
import CoinWatchProto
import CoinWatchRPC
import Testing

/// Bodies, envelopes, codes and CORS.
@Suite("Connect coding")
struct ConnectCodingTests {
    let methods = ConnectMethods()

    private func plan(_ path: Substring, _ contentType: String) throws -> ConnectCallPlan {
        let route = ConnectRoute.route(httpMethod: "POST", path: path, query: nil, header: { $0 == "content-type" ? contentType : nil },
                                       methods: methods, maxMessageBytes: 1 << 20)
        guard case .call(let plan) = route else { throw ConnectFailure(.internal, "not routed: \(route)") }
        return plan
    }

    @Test("every code's name and HTTP status, as the specification lists them")
    func codes() {
        let expected: [(RPCError.Code, String, Int)] = [
            (.cancelled, "canceled", 499), (.unknown, "unknown", 500), (.invalidArgument, "invalid_argument", 400),
            (.deadlineExceeded, "deadline_exceeded", 504), (.notFound, "not_found", 404),
            (.alreadyExists, "already_exists", 409), (.permissionDenied, "permission_denied", 403),
            (.resourceExhausted, "resource_exhausted", 429), (.failedPrecondition, "failed_precondition", 400),
            (.aborted, "aborted", 409), (.outOfRange, "out_of_range", 400), (.unimplemented, "unimplemented", 501),
            (.internal, "internal", 500), (.unavailable, "unavailable", 503), (.dataLoss, "data_loss", 500),
            (.unauthenticated, "unauthenticated", 401),
        ]
        for (code, name, status) in expected {
            #expect(code.connectName == name)
            #expect(code.connectHTTPStatus == status)
            #expect(RPCError.Code(connectName: name) == code)
        }
        #expect(RPCError.Code(rawValue: 99).connectName == "unknown")
        #expect(RPCError.Code(connectName: "ok") == nil)
        #expect(RPCError.Code(connectName: "cancelled") == nil)
    }

    @Test("error bodies and end-of-stream messages")
    func bodies() {
        let error = RPCError(code: .notFound, message: "no settings for device \"x\"")
        #expect(String(decoding: ConnectBodies.errorJSON(error), as: UTF8.self)
            == #"{"code":"not_found","message":"no settings for device \"x\""}"#)
        #expect(String(decoding: ConnectBodies.endStreamJSON(nil), as: UTF8.self) == "{}")
        #expect(String(decoding: ConnectBodies.endStreamJSON(RPCError(code: .ok, message: "")), as: UTF8.self) == "{}")
        #expect(String(decoding: ConnectBodies.endStreamJSON(error, metadata: ["k": ["a", "b"]]), as: UTF8.self)
            == #"{"error":{"code":"not_found","message":"no settings for device \"x\""},"metadata":{"k":["a","b"]}}"#)
        let end = ConnectCallPlan.streamEnd(RPCError(code: .unavailable, message: ""))
        #expect(end.prefix(5) == [0x02, 0, 0, 0, UInt8(end.count - 5)])
        #expect(String(decoding: end.dropFirst(5), as: UTF8.self) == #"{"error":{"code":"unavailable"}}"#)
        let response = ConnectErrorResponse(error)
        #expect(response.status == 404 && response.contentType == "application/json")
    }

    @Test("JSON requests become the binary request; responses and stream messages become JSON")
    func transcoding() throws {
        let unary = try plan("/coinwatch.v1.CoinWatch/SaveSettings", "application/json")
        let json = #"{"device_id":"d","setRules":{"BTC":{"below":{"mantissa":"600005","scale":1}}},"expectedVersion":"0","future":1}"#
        let binary = try Array(json.utf8).withUnsafeBytes { try unary.binaryRequest(body: $0, maxMessageBytes: 1000) }
        let request = try V1.SaveSettingsRequest(serializedBytes: binary)
        #expect(request == V1.SaveSettingsRequest(
            deviceID: "d", setRules: ["BTC": V1.AlertRule(below: V1.Decimal(mantissa: 600_005, scale: 1))],
            precondition: .expectedVersion(0)))
        let response = V1.SaveSettingsResponse(settings: V1.Settings(deviceID: "d", version: 1))
        let body = try response.serializedBytes().withUnsafeBytes { try unary.unaryResponseBody($0) }
        #expect(String(decoding: body, as: UTF8.self) == #"{"settings":{"deviceId":"d","version":"1"}}"#)

        let bad = #"{"deviceId":7}"#
        #expect(throws: ConnectFailure.self) {
            try Array(bad.utf8).withUnsafeBytes { try unary.binaryRequest(body: $0, maxMessageBytes: 1000) }
        }
        do {
            _ = try Array(bad.utf8).withUnsafeBytes { try unary.binaryRequest(body: $0, maxMessageBytes: 1000) }
        } catch let error as ConnectFailure {
            #expect(error.error == RPCError(code: .invalidArgument,
                                            message: "coinwatch.v1.SaveSettingsRequest.deviceId: expected a string, got a number"))
        }
        #expect(throws: ConnectFailure(.resourceExhausted, "request message of 14 bytes exceeds the limit of 10")) {
            try Array(bad.utf8).withUnsafeBytes { try unary.binaryRequest(body: $0, maxMessageBytes: 10) }
        }

        let stream = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json")
        var envelope: [UInt8] = []
        ConnectEnvelope.append(flags: 0, payload: Array(#"{"symbols":["BTC"]}"#.utf8), to: &envelope)
        let streamRequest = try envelope.withUnsafeBytes { try stream.binaryRequest(body: $0, maxMessageBytes: 1000) }
        #expect(try V1.StreamPricesRequest(serializedBytes: streamRequest).symbols == ["BTC"])
        // A price update written once for many streams, with its sequence number as a suffix.
        let update = V1.PriceUpdate(symbol: "BTC", price: V1.Decimal(mantissa: 5, scale: 0)).serializedBytes()
        let suffix = V1.PriceUpdate(sequence: 7).serializedBytes()
        var out: [UInt8] = []
        try update.withUnsafeBytes { u in try suffix.withUnsafeBytes { s in try stream.appendStreamMessage(payload: u, suffix: s, to: &out) } }
        #expect(out[0] == 0 && Int(out[4]) == out.count - 5)
        #expect(String(decoding: out.dropFirst(5), as: UTF8.self) == #"{"symbol":"BTC","price":{"mantissa":"5"},"sequence":"7"}"#)
        let protoStream = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+proto")
        out = []
        try update.withUnsafeBytes { u in try suffix.withUnsafeBytes { s in try protoStream.appendStreamMessage(payload: u, suffix: s, to: &out) } }
        #expect(Array(out.dropFirst(5)) == update + suffix)
    }

    @Test("a streaming request body holds exactly one uncompressed envelope")
    func requestEnvelopes() throws {
        let stream = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+proto")
        let cases: [([UInt8], RPCError.Code)] = [
            ([], .invalidArgument), ([0, 0, 0], .invalidArgument), ([0, 0, 0, 0, 5, 1], .invalidArgument),
            ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], .invalidArgument), ([1, 0, 0, 0, 0], .unimplemented),
            ([2, 0, 0, 0, 0], .invalidArgument), ([0, 0x10, 0, 0, 0], .resourceExhausted),
        ]
        for (body, code) in cases {
            do {
                _ = try body.withUnsafeBytes { try stream.binaryRequest(body: $0, maxMessageBytes: 1000) }
                Issue.record("accepted \(body)")
            } catch let error as ConnectFailure {
                #expect(error.error.code == code, "\(body): \(error)")
            }
        }
        #expect(try ([0, 0, 0, 0, 0] as [UInt8]).withUnsafeBytes { try stream.binaryRequest(body: $0, maxMessageBytes: 1000) } == [])
    }

    @Test("CORS: only configured origins, preflight for the methods served")
    func cors() {
        let none = CORSPolicy(allowedOrigins: [])
        #expect(none.preflight(origin: "https://a.example", requestMethod: "POST").status == 403)
        #expect(none.responseHeaders(origin: "https://a.example").isEmpty)
        let some = CORSPolicy(allowedOrigins: ["https://a.example"])
        let answer = some.preflight(origin: "https://a.example", requestMethod: "POST")
        #expect(answer.status == 204)
        #expect(answer.headers.first { $0.name == "Access-Control-Allow-Origin" }?.value == "https://a.example")
        #expect(answer.headers.first { $0.name == "Access-Control-Allow-Headers" }?.value.contains("Connect-Protocol-Version") == true)
        #expect(some.preflight(origin: "https://b.example", requestMethod: "POST").status == 403)
        #expect(some.preflight(origin: "https://a.example", requestMethod: "DELETE").status == 403)
        #expect(some.responseHeaders(origin: "https://a.example").count == 3)
        #expect(some.responseHeaders(origin: nil).isEmpty)
        #expect(CORSPolicy(allowedOrigins: ["*"]).allows(origin: "http://anything:1"))
    }
}
