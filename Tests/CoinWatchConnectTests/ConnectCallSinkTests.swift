import CoinWatchConnect
import CoinWatchLogging
import CoinWatchProto
import CoinWatchRPC
import Synchronization
import Testing

/// Connect calls through the real dispatcher: the same handlers, authorization hook, deadlines and cancellation
/// as every transport, with the HTTP side recorded.
@Suite(.timeLimit(.minutes(3)))
struct ConnectCallSinkTests {
    /// @unchecked Sendable: made, used and read on the dispatcher's loop only (the test hops there to read it).
    final class Recorder: ConnectHTTPResponder, @unchecked Sendable {
        var events: [String] = []
        var status = 0
        var body: [UInt8] = []
        var isWritable = true
        var queuedBytes = 0

        func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
            events.append("respond")
            self.status = status
            self.body = Array(body)
        }

        func startStream(status: Int, headers: [(name: String, value: String)]) {
            events.append("start")
            self.status = status
        }

        func stream(_ bytes: [UInt8]) {
            events.append("stream")
            body += bytes
        }

        func finish() { events.append("finish") }

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The JSON of each envelope of a streamed body.
        var envelopes: [(UInt8, String)] {
            var out: [(UInt8, String)] = []
            var rest = body[...]
            while rest.count >= 5 {
                let start = rest.startIndex
                let length = Int(rest[start + 1]) << 24 | Int(rest[start + 2]) << 16 | Int(rest[start + 3]) << 8
                    | Int(rest[start + 4])
                out.append((rest[start], String(decoding: rest.dropFirst(5).prefix(length), as: UTF8.self)))
                rest = rest.dropFirst(5 + length)
            }
            return out
        }
    }

    struct RefuseIntruders: CallAuthorizer {
        func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
            if request.stringField([1]) == "intruder" {
                throw RPCError(code: .permissionDenied, message: "not your device")
            }
        }
    }

    /// Terminations the held streams saw.
    static let terminations = Mutex<[String]>([])

    static let methods: [RPCMethod] = [
        .unary(V1.CoinWatch.getSettings, inline: { request, _ throws(RPCError) in
            guard request.deviceID != "missing" else { throw RPCError(code: .notFound, message: "no settings") }
            return V1.GetSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 3))
        }),
        // Two updates, then the stream stays open until its deadline or a cancel.
        .serverStream(V1.CoinWatch.streamPrices, onLoop: { request, stream throws(RPCError) in
            for (index, symbol) in request.symbols.enumerated() {
                stream.send(V1.PriceUpdate(symbol: symbol, price: V1.Decimal(mantissa: 5, scale: 1), sequence: UInt64(index + 1)))
            }
            stream.onTerminate { error in terminations.withLock { $0.append("\(request.symbols): \(error.code)") } }
        }),
    ]

    private func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            _ = loop.execute { continuation.resume(returning: body()) }
        }
    }

    private func plan(_ path: Substring, _ contentType: String, timeoutMs: String? = nil) throws -> ConnectCallPlan {
        let headers = ["content-type": contentType, "connect-timeout-ms": timeoutMs].compactMapValues { $0 }
        let route = ConnectRoute.route(httpMethod: "POST", path: path, query: nil, header: { headers[$0] },
                                       methods: ConnectMethods(), maxMessageBytes: 1 << 20)
        guard case .call(let plan) = route else { throw ConnectFailure(.internal, "not routed") }
        return plan
    }

    /// Runs `body` with a dispatcher on one loop and its `connect` transport.
    private func withDispatcher(
        _ body: (CallDispatcher, CallTransport, EventLoop) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(threads: 1)
        let loop = group.next()
        let dispatcher = CallDispatcher(methods: Self.methods, maxConcurrentCallsPerConnection: 16, maxMessageBytes: 1 << 20,
                                        authorizer: RefuseIntruders(), logger: .disabled, loops: [loop])
        let transport = dispatcher.transport("connect")
        try await body(dispatcher, transport, loop)
        await group.shutdownGracefully()
    }

    /// Waits (bounded) until `condition`, read on the loop, holds.
    private func waitFor(_ loop: EventLoop, _ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
        for _ in 0..<600 {
            if await onLoop(loop, condition) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting for \(what)")
    }

    @Test("unary JSON: the handler's answer, the handler's error, and the authorization hook's refusal")
    func unary() async throws {
        try await withDispatcher { dispatcher, transport, loop in
            let plan = try plan("/coinwatch.v1.CoinWatch/GetSettings", "application/json")
            for (device, status, text) in [
                ("phone", 200, #"{"settings":{"deviceId":"phone","version":"3"}}"#),
                ("missing", 404, #"{"code":"not_found","message":"no settings"}"#),
                ("intruder", 403, #"{"code":"permission_denied","message":"not your device"}"#),
            ] {
                let request = try Array(#"{"deviceId":"\#(device)"}"#.utf8).withUnsafeBytes {
                    try plan.binaryRequest(body: $0, maxMessageBytes: 1000)
                }
                let answer = await onLoop(loop) {
                    let recorder = Recorder()
                    let sink = ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: transport,
                                                     eventLoop: loop, metadata: [:], peer: "test", responder: recorder)
                    return "\(recorder.events) \(recorder.status) \(recorder.text) \(sink.call == nil)"
                }
                #expect(answer == "[\"respond\"] \(status) \(text) true")
            }
        }
    }

    @Test("streaming: messages as they are sent, then the deadline ends the stream in its end message")
    func streamDeadline() async throws {
        try await withDispatcher { dispatcher, transport, loop in
            let plan = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json", timeoutMs: "100")
            let request = V1.StreamPricesRequest(symbols: ["BTC", "ETH"]).serializedBytes()
            let recorder = await onLoop(loop) { () -> Recorder in
                let recorder = Recorder()
                ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: transport,
                                      eventLoop: loop, metadata: [:], peer: "test", responder: recorder)
                return recorder
            }
            try await waitFor(loop, "the end of the stream") { recorder.events.last == "finish" }
            let envelopes = await onLoop(loop) { recorder.envelopes.map { "\($0.0) \($0.1)" } }
            #expect(envelopes == [
                #"0 {"symbol":"BTC","price":{"mantissa":"5","scale":1},"sequence":"1"}"#,
                #"0 {"symbol":"ETH","price":{"mantissa":"5","scale":1},"sequence":"2"}"#,
                #"2 {"error":{"code":"deadline_exceeded","message":"deadline of 100 ms exceeded"}}"#,
            ])
            #expect(await onLoop(loop) { recorder.status } == 200)
            #expect(Self.terminations.withLock { $0.contains("[\"BTC\", \"ETH\"]: DEADLINE_EXCEEDED") })
        }
    }

    @Test("a running stream's head goes out at once, before any message")
    func streamHeadFirst() async throws {
        try await withDispatcher { dispatcher, transport, loop in
            let plan = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json")
            let request = V1.StreamPricesRequest(symbols: []).serializedBytes()
            let (events, status, sink) = await onLoop(loop) { () -> ([String], Int, ConnectCallSink) in
                let recorder = Recorder()
                let sink = ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: transport,
                                                 eventLoop: loop, metadata: [:], peer: "test", responder: recorder)
                return (recorder.events, recorder.status, sink)
            }
            #expect(events == ["start"])
            #expect(status == 200)
            await onLoop(loop) { sink.cancel() }
        }
    }

    @Test("a client that goes away cancels the call, and nothing more is written")
    func cancellation() async throws {
        try await withDispatcher { dispatcher, transport, loop in
            let plan = try plan("/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+proto")
            let request = V1.StreamPricesRequest(symbols: ["SOL"]).serializedBytes()
            let (recorder, sink) = await onLoop(loop) { () -> (Recorder, ConnectCallSink) in
                let recorder = Recorder()
                let sink = ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: transport,
                                                 eventLoop: loop, metadata: [:], peer: "test", responder: recorder)
                return (recorder, sink)
            }
            #expect(await onLoop(loop) { sink.call != nil && recorder.events == ["start", "stream"] })
            await onLoop(loop) { sink.cancel() }
            #expect(Self.terminations.withLock { $0.contains("[\"SOL\"]: CANCELLED") })
            #expect(await onLoop(loop) { recorder.events == ["start", "stream"] && sink.call == nil })
        }
    }
}
