import CoinWatchTestSupport
import CoinWatchProto
import CoinWatchTestSupport
import Testing
@testable import CoinWatchRPC

/// Every bad input of docs/PROTOCOL.md gets its documented answer, and the
/// server keeps serving a well-behaved client meanwhile.
@Suite("RPC bad input")
struct RPCServerBadInputTests {
    /// Sends `bytes` on a raw socket and returns the frames the server sent before closing.
    static func exchange(_ port: Int, _ bytes: [UInt8]) async throws -> [V1.Frame] {
        let raw = try RawClient(port: port)
        raw.send(bytes)
        return RawFrames.decode(await raw.readToEnd())
    }

    static func expectStillServing(_ running: RunningServer) async throws {
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        client.close()
        await group.shutdownGracefully()
    }

    @Test("connection errors: zero length, oversize length, garbage, unknown kind or non-Hello first, bad version")
    func connectionErrors() async throws {
        let running = try RunningServer { $0.maxFrameBytes = 1024 }
        let cases: [(String, [UInt8], RPCError.Code, String)] = [
            ("zero length", [0, 0, 0, 0], .invalidArgument, "frame length 0"),
            ("oversize", [0, 0, 4, 1] + [UInt8](repeating: 0, count: 16), .resourceExhausted, "1025"),
            ("garbage", [0, 0, 0, 3, 0xFF, 0xFF, 0xFF], .invalidArgument, "not a valid coinwatch.v1.Frame"),
            ("unknown kind first", [0, 0, 0, 2, 0x78, 0x01], .failedPrecondition,
             "the first frame must be Hello, got a frame of a kind this server does not know"),
            ("call first", RawFrames.frame(.call(V1.Call(callID: 1, method: "x"))), .failedPrecondition,
             "the first frame must be Hello, got Call"),
            ("version 7", RawFrames.frame(.hello(V1.Hello(protocolVersion: 7))), .failedPrecondition,
             "unsupported protocol version 7; this server speaks 1"),
        ]
        for (name, bytes, code, text) in cases {
            let frames = try await Self.exchange(running.port, bytes)
            let error = try #require(frames.last?.connectionError, "\(name): no ConnectionError in \(frames)")
            #expect(error.code == code.wire, "\(name)")
            #expect(error.message.contains(text), "\(name): \(error.message)")
        }
        try await Self.expectStillServing(running)
        await running.server.shutdownNow()
    }

    @Test("HTTP on the RPC port gets one plain-text line", arguments: ["GET / HTTP/1.1\r\n\r\n", "POST /x HTTP/1.1\r\n\r\n", "PRI * HTTP/2.0\r\n\r\n"])
    func http(request: String) async throws {
        let running = try RunningServer()
        let raw = try RawClient(port: running.port)
        raw.send(Array(request.utf8))
        let reply = String(decoding: await raw.readToEnd(), as: UTF8.self)
        #expect(reply == "coinwatchd speaks the CoinWatch protocol (length-prefixed protobuf frames), not HTTP; see docs/PROTOCOL.md\n")
        await running.server.shutdownNow()
    }

    @Test("call id 0 ends that call only; a reused live call id is a connection error")
    func callIDs() async throws {
        let running = try RunningServer()
        let health = V1.HealthCheckRequest().serializedBytes()
        // Call id 0 is answered with an End carrying 0, and the connection serves on.
        let zero = try RawClient(port: running.port)
        zero.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 0, method: "coinwatch.v1.Health/Check", payload: health)))
            + RawFrames.frame(.call(V1.Call(callID: 8, method: "coinwatch.v1.Health/Check", payload: health))))
        var received: [V1.Frame] = []
        var buffer: [UInt8] = []
        while received.compactMap(\.end).count < 2 {
            let chunk = await zero.readSome()
            guard !chunk.isEmpty else { break }
            buffer += chunk
            received = RawFrames.decode(buffer)
        }
        let ends = received.compactMap(\.end)
        #expect(ends.contains { $0.callID == 0 && $0.status?.message == "call id 0 is reserved" })
        #expect(ends.contains { $0.callID == 8 && $0.status == nil && !$0.payload.isEmpty })

        // Reusing the id of a live call: an End for it could not be told from the live call's own, so the
        // connection fails, and the live call is ended with it (its handler is cancelled).
        let reused = try RawClient(port: running.port)
        let slow = V1.GetSettingsRequest(deviceID: "slow").serializedBytes()
        reused.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 7, method: "coinwatch.v1.CoinWatch/GetSettings", payload: slow)))
            + RawFrames.frame(.call(V1.Call(callID: 7, method: "coinwatch.v1.Health/Check", payload: health))))
        let frames = RawFrames.decode(await reused.readToEnd())
        #expect(frames.compactMap(\.end).isEmpty, "no End for either call 7: \(frames)")
        let error = try #require(frames.last?.connectionError)
        #expect(error.code == .invalidArgument)
        #expect(error.message == "call id 7 is already in use by a live call")
        #expect(await eventually { running.server.stats.liveCalls == 0 })
        try await Self.expectStillServing(running)
        await running.server.shutdownNow()
    }

    @Test("an answer quoting what the client sent stays within the frame limit the server announced")
    func quotedInputIsCut() async throws {
        let running = try RunningServer()
        let raw = try RawClient(port: running.port)
        // A 3 MB metadata key in upper case and a 3 MB method name: each error message quotes them.
        let key = String(repeating: "K", count: 3_000_000)
        let method = String(repeating: "m", count: 3_000_000)
        raw.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.Health/Check", metadata: [key: "v"],
                                            payload: V1.HealthCheckRequest().serializedBytes())))
            + RawFrames.frame(.call(V1.Call(callID: 2, method: method, payload: []))))
        var bytes: [UInt8] = []
        var frames: [V1.Frame] = []
        while frames.compactMap(\.end).count < 2 {
            let chunk = await raw.readSome()
            #expect(!chunk.isEmpty, "the server closed or fell silent")
            if chunk.isEmpty { break }
            bytes += chunk
            frames = RawFrames.decode(bytes)
        }
        let limit = RPCServer.Configuration().maxFrameBytes
        var offset = 0
        while bytes.count - offset >= 4 {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            #expect(length <= limit, "a frame of \(length) bytes against the announced \(limit)")
            offset += 4 + length
        }
        for end in frames.compactMap(\.end) {
            let message = end.status?.message ?? ""
            #expect(message.utf8.count <= RPCError.maxMessageBytes, "\(message.utf8.count) bytes")
            #expect(message.hasSuffix("more bytes cut)"), "\(message.prefix(80))")
        }
        #expect(frames.compactMap(\.end).first { $0.callID == 1 }?.status?.message.hasPrefix("metadata key 'KKK") == true)
        #expect(frames.compactMap(\.end).first { $0.callID == 2 }?.status?.message.hasPrefix("unknown method 'mmm") == true)
        try await Self.expectStillServing(running)
    }

    @Test("after the handshake a frame of a kind this version does not know is ignored")
    func unknownKindIgnored() async throws {
        let running = try RunningServer()
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello + [0, 0, 0, 2, 0x78, 0x01]
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.Health/Check",
                                            payload: V1.HealthCheckRequest().serializedBytes()))))
        var frames: [V1.Frame] = []
        var buffer: [UInt8] = []
        while frames.compactMap(\.end).isEmpty {
            let chunk = await raw.readSome()
            guard !chunk.isEmpty else { break }
            buffer += chunk
            frames = RawFrames.decode(buffer)
        }
        #expect(frames.compactMap(\.end).first?.status == nil, "the call after it is answered OK: \(frames)")
        #expect(!frames.contains { $0.connectionError != nil })
        await running.server.shutdownNow()
    }

    @Test("a Ping payload over 64 bytes is a connection error; one of 64 is echoed whole")
    func pingPayloadLimit() async throws {
        let running = try RunningServer()
        let full = [UInt8](repeating: 9, count: RPCProtocol.maxPingPayload)
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello + RawFrames.frame(.ping(V1.Ping(payload: full)))
            + RawFrames.frame(.ping(V1.Ping(payload: full + [9]))))
        let frames = RawFrames.decode(await raw.readToEnd())
        let pongs = frames.compactMap { frame -> V1.Pong? in if case .pong(let pong) = frame.kind { return pong } else { return nil } }
        #expect(pongs.map(\.payload) == [full])
        #expect(frames.last?.connectionError?.message == "Ping payload of 65 bytes exceeds the limit of 64 bytes")
        await running.server.shutdownNow()
    }

    @Test("half a frame then silence: the handshake timeout closes the connection")
    func halfFrame() async throws {
        // The well-behaved client must finish its own handshake within the same timeout, so it is generous: a
        // busy machine may take a while between accepting the connection and reading its Hello.
        let running = try RunningServer { $0.handshakeTimeout = .seconds(5) }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let frames = try await Self.exchange(running.port, Array(RawFrames.hello.prefix(5)))
        let error = try #require(frames.last?.connectionError)
        #expect(error.code == .deadlineExceeded)
        #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        client.close()
        await group.shutdownGracefully()
        await running.server.shutdownNow()
    }

    @Test("a ping flood is answered with GoAway and a close, pings within the limit with Pong")
    func pingFlood() async throws {
        // No refill: however slowly the server gets through the 50 pings, exactly the burst is answered.
        let running = try RunningServer {
            $0.pingBurst = 5
            $0.pingsPerSecond = 0
        }
        let raw = try RawClient(port: running.port)
        var bytes = RawFrames.hello
        for index in 0..<50 { bytes += RawFrames.frame(.ping(V1.Ping(payload: [UInt8(index)]))) }
        raw.send(bytes)
        let frames = RawFrames.decode(await raw.readToEnd())
        let pongs = frames.filter { if case .pong = $0.kind { return true } else { return false } }
        #expect(pongs.count == 5)
        guard case .goAway(let goAway) = frames.last?.kind else {
            Issue.record("expected GoAway last, got \(String(describing: frames.last))")
            return
        }
        #expect(goAway.code == .resourceExhausted)
        #expect(goAway.reason == "too many pings")
        try await Self.expectStillServing(running)
        await running.server.shutdownNow()
    }

    @Test("a connection silent past the idle timeout gets GoAway and is closed")
    func idle() async throws {
        let running = try RunningServer { $0.idleTimeout = .milliseconds(300) }
        let frames = try await Self.exchange(running.port, RawFrames.hello)
        guard case .goAway(let goAway) = frames.last?.kind else {
            Issue.record("expected GoAway, got \(frames)")
            return
        }
        #expect(goAway.code == .ok, "nothing went wrong: the connection was unused")
        #expect(goAway.reason == "idle for 300 ms")
        await running.server.shutdownNow()
    }

    @Test("connections beyond the limit are refused with RESOURCE_EXHAUSTED")
    func connectionLimit() async throws {
        let running = try RunningServer { $0.maxConnections = 2 }
        let first = try RawClient(port: running.port)
        let second = try RawClient(port: running.port)
        first.send(RawFrames.hello)
        second.send(RawFrames.hello)
        #expect(await eventually { running.server.stats.openConnections == 2 })
        let frames = try await Self.exchange(running.port, RawFrames.hello)
        #expect(frames.last?.connectionError?.code == .resourceExhausted)
        first.close()
        second.close()
        await running.server.shutdownNow()
    }
}
