import CoinWatchConnect
import CoinWatchProto
import CoinWatchRPC
import Testing

/// What the HTTP layer is asked to send for each way a call can go.
@Suite("Connect exchange")
struct ConnectExchangeTests {
    final class Recorder: ConnectHTTPResponder {
        var events: [String] = []
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []

        func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
            events.append("respond")
            self.status = status
            self.headers = [("Content-Type", contentType)] + headers
            self.body = Array(body)
        }

        func startStream(status: Int, headers: [(name: String, value: String)]) {
            events.append("start")
            self.status = status
            self.headers = headers
        }

        func stream(_ bytes: [UInt8]) {
            events.append("stream")
            body += bytes
        }

        func finish() { events.append("finish") }
        var isWritable = true
        var queuedBytes = 0

        var contentType: String? { headers.first { $0.name == "Content-Type" }?.value }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private func plan(_ path: Substring, _ contentType: String) throws -> ConnectCallPlan {
        let route = ConnectRoute.route(httpMethod: "POST", path: path, query: nil,
                                       header: { $0 == "content-type" ? contentType : nil },
                                       methods: ConnectMethods(), maxMessageBytes: 1 << 20)
        guard case .call(let plan) = route else { throw ConnectFailure(.internal, "not routed") }
        return plan
    }

    private let none = UnsafeRawBufferPointer(start: nil, count: 0)

    @Test("unary: the response in the request's codec, or the error with its HTTP status")
    func unary() throws {
        let recorder = Recorder()
        var exchange = ConnectExchange(plan: try plan("/coinwatch.v1.CoinWatch/GetSettings", "application/json"),
                                       responder: recorder, extraHeaders: [("Vary", "Origin")])
        let response = V1.GetSettingsResponse(settings: V1.Settings(deviceID: "d", version: 2)).serializedBytes()
        response.withUnsafeBytes { exchange.answer(code: .ok, message: "", payload: $0) }
        #expect(recorder.events == ["respond"] && recorder.status == 200)
        #expect(recorder.contentType == "application/json")
        #expect(recorder.headers.contains { $0.name == "Vary" })
        #expect(recorder.text == #"{"settings":{"deviceId":"d","version":"2"}}"#)
        exchange.end(code: .internal, message: "late")
        #expect(recorder.events == ["respond"], "nothing after the answer")

        let failed = Recorder()
        var proto = ConnectExchange(plan: try plan("/coinwatch.v1.CoinWatch/GetSettings", "application/proto"), responder: failed)
        proto.answer(code: .notFound, message: "no settings", payload: none)
        #expect(failed.status == 404 && failed.contentType == "application/json")
        #expect(failed.text == #"{"code":"not_found","message":"no settings"}"#)
    }

    @Test("streaming: head, one envelope per message, then the end-of-stream status")
    func streaming() throws {
        let recorder = Recorder()
        var exchange = ConnectExchange(plan: try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json"),
                                       responder: recorder)
        for sequence in 1...2 {
            let update = V1.PriceUpdate(symbol: "BTC", sequence: UInt64(sequence)).serializedBytes()
            update.withUnsafeBytes { exchange.send(payload: $0, suffix: none) }
        }
        exchange.end(code: .deadlineExceeded, message: "deadline of 5 ms exceeded")
        #expect(recorder.events == ["start", "stream", "stream", "stream", "finish"])
        #expect(recorder.status == 200 && recorder.contentType == "application/connect+json")
        var messages: [(UInt8, String)] = []
        var rest = recorder.body[...]
        while rest.count >= 5 {
            let length = Int(rest[rest.startIndex + 1]) << 24 | Int(rest[rest.startIndex + 2]) << 16
                | Int(rest[rest.startIndex + 3]) << 8 | Int(rest[rest.startIndex + 4])
            messages.append((rest[rest.startIndex], String(decoding: rest.dropFirst(5).prefix(length), as: UTF8.self)))
            rest = rest.dropFirst(5 + length)
        }
        #expect(rest.isEmpty)
        #expect(messages.map(\.0) == [0, 0, 2])
        #expect(messages.map(\.1) == [
            #"{"symbol":"BTC","sequence":"1"}"#, #"{"symbol":"BTC","sequence":"2"}"#,
            #"{"error":{"code":"deadline_exceeded","message":"deadline of 5 ms exceeded"}}"#,
        ])
    }

    @Test("a stream refused before its first message is one answer: 200 and the end-of-stream error")
    func refusedStream() throws {
        let recorder = Recorder()
        var exchange = ConnectExchange(plan: try plan("/coinwatch.v1.CoinWatch/StreamAlerts", "application/connect+proto"),
                                       responder: recorder)
        exchange.answer(code: .unauthenticated, message: "no key", payload: none)
        #expect(recorder.events == ["respond"] && recorder.status == 200)
        #expect(recorder.contentType == "application/connect+proto")
        #expect(recorder.body.first == 2)
        #expect(String(decoding: recorder.body.dropFirst(5), as: UTF8.self) == #"{"error":{"code":"unauthenticated","message":"no key"}}"#)
        let ok = Recorder()
        var okExchange = ConnectExchange(plan: try plan("/coinwatch.v1.CoinWatch/StreamAlerts", "application/connect+json"),
                                         responder: ok)
        okExchange.end(code: .ok, message: "")
        #expect(ok.body == [2, 0, 0, 0, 2] + Array("{}".utf8))
    }

    @Test("route refusals: protocol errors in the protocol's shape, HTTP errors with their status")
    func refusals() {
        let unary = Recorder()
        ConnectExchange.refuse(ConnectFailure(.invalidArgument, "bad timeout"),
                               contentType: ConnectContentType(codec: .proto, isStreaming: false), responder: unary)
        #expect(unary.status == 400 && unary.text == #"{"code":"invalid_argument","message":"bad timeout"}"#)
        let stream = Recorder()
        ConnectExchange.refuse(ConnectFailure(.unimplemented, "gzip"),
                               contentType: ConnectContentType(codec: .json, isStreaming: true), responder: stream)
        #expect(stream.status == 200 && stream.body.first == 2)
        let http = Recorder()
        ConnectExchange.refuse(status: 415, failure: ConnectFailure(.unknown, "text/plain"),
                               headers: [("Accept-Post", "application/proto, application/json")], responder: http)
        #expect(http.status == 415 && http.headers.contains { $0.name == "Accept-Post" })
        #expect(http.text == #"{"code":"unknown","message":"text/plain"}"#)
    }
}
