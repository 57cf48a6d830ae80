import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchRPC

@Suite("RPC server lifecycle and limits")
struct RPCServerLifecycleTests {
    @Test("graceful shutdown: GoAway, streams end UNAVAILABLE, in-flight unary calls finish, new calls are refused")
    func gracefulShutdown() async throws {
        // The grace period only bounds a call that never finishes; this one finishes when the test opens the gate,
        // however long the steps before take on a busy machine.
        let running = try RunningServer { $0.shutdownGracePeriod = .seconds(600) }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)

        // A unary call in flight with no deadline: it answers once the gate opens.
        let inFlight = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "gated")) }
        var stream = client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest()).makeAsyncIterator()
        _ = try await stream.next()
        #expect(await eventually { running.server.stats.liveCalls == 2 })

        let shutdown = Task { await running.server.shutdownGracefully() }
        // The stream ends UNAVAILABLE at once.
        let streamError = await #expect(throws: RPCError.self) {
            while try await stream.next() != nil {}
        }
        #expect(streamError?.code == .unavailable)
        #expect(streamError?.notProcessed == false, "the server ran the stream: it may not be sent again blindly")
        // New calls on the going-away connection are refused, marked as never started so a client may send them
        // elsewhere.
        #expect(await eventually { !client.isUsable })
        let refused = await #expect(throws: RPCError.self) { try await client.unary(V1.Health.check, V1.HealthCheckRequest()) }
        #expect(refused?.code == .unavailable)
        #expect(refused?.notProcessed == true)
        // The in-flight unary call is still live, and finishes with its own answer once allowed to.
        #expect(await eventually { running.server.stats.liveCalls == 1 })
        running.service.gate.open()
        #expect(try await inFlight.value.settings?.deviceID == "gated")
        await shutdown.value
        #expect(running.server.stats.openConnections == 0)
        // Nothing listens any more.
        #expect(throws: RawClientError.self) { _ = try RawClient(port: running.port) }
        await group.shutdownGracefully()
    }

    @Test("a unary call still running when the grace period ends is ended UNAVAILABLE, and the shutdown returns")
    func gracePeriodEndsUnfinishedCalls() async throws {
        let running = try RunningServer { $0.shutdownGracePeriod = .milliseconds(200) }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        // "slow" never answers: only the end of the grace period can end it. Started with the callback API, which
        // hands the call to the client's loop at once: a task could wait for a thread of a busy pool long enough
        // for the shutdown below to come first.
        let outcome = Mutex<Result<[UInt8], RPCError>?>(nil)
        client.startUnary(
            method: V1.CoinWatch.getSettings.path, payload: V1.GetSettingsRequest(deviceID: "slow").serializedBytes()
        ) { result in outcome.withLock { $0 = result } }
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 1 })
        await running.server.shutdownGracefully()
        #expect(await eventually(timeout: .seconds(120)) { outcome.withLock { $0 } != nil })
        var error: RPCError?
        if case .failure(let failure)? = outcome.withLock({ $0 }) { error = failure }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "the server shut down before the call finished")
        #expect(running.server.stats.openConnections == 0)
        await group.shutdownGracefully()
    }

    @Test("a reader that never reads: the server's memory for it stays bounded and the slow-consumer policy closes it")
    func neverReads() async throws {
        let running = try RunningServer {
            $0.highWatermark = 256 << 10
            $0.lowWatermark = 64 << 10
            $0.slowConsumerTimeout = .milliseconds(500)
        }
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello + RawFrames.frame(.call(V1.Call(
            callID: 1, method: "coinwatch.v1.CoinWatch/StreamAlerts",
            payload: V1.StreamAlertsRequest(deviceID: "d").serializedBytes()))))
        // The stream stops producing once the socket buffers and the high watermark
        // are full; then, after the slow-consumer timeout, the connection is closed.
        #expect(await eventually { running.server.stats.startedCalls == 1 })
        #expect(await eventually { running.server.stats.openConnections == 0 })
        let produced = running.service.floodBytes.load(ordering: .relaxed)
        // Bounded by kernel socket buffers (a few MiB on loopback) plus the high watermark.
        #expect(produced < 64 << 20, "produced \(produced) bytes for a reader that never read")
        #expect(produced > 256 << 10)
        #expect(running.server.stats.liveCalls == 0)
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("requests pipelined by a client that never reads are not answered past the high watermark")
    func pipelinedNeverReads() async throws {
        let running = try RunningServer {
            $0.highWatermark = 256 << 10
            $0.lowWatermark = 64 << 10
            $0.slowConsumerTimeout = .milliseconds(500)
        }
        let raw = try RawClient(port: running.port)
        // 2,000 small requests in one write, each asking for a 256 KiB answer; the server's first 64 KiB read holds
        // about 1,300 of them, all of which were answered before a pause stopped the rest of a read.
        raw.send(RawFrames.hello + RawFrames.getPrices(1...2000, symbols: ["big"]))
        #expect(await eventually { running.service.bigAnswers.load(ordering: .relaxed) > 0 })
        // The slow-consumer policy closes it; what was answered by then is what it cost.
        #expect(await eventually { running.server.stats.openConnections == 0 })
        let answered = running.service.bigAnswers.load(ordering: .relaxed)
        // What the kernel's socket buffers take (a few MiB on loopback, 64 MiB on a host tuned for throughput:
        // 256 answers) and the high watermark: far below the first read's 1,300.
        #expect(answered < 700, "answered \(answered) of 2,000 requests for a client that never read")
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("input held while paused is delivered in order once the reader catches up")
    func heldInputDelivered() async throws {
        let running = try RunningServer {
            $0.highWatermark = 256 << 10
            $0.lowWatermark = 64 << 10
            // This reader is slow only when the machine is busy: the slow-consumer policy must not cut it off.
            $0.slowConsumerTimeout = .seconds(600)
        }
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello + RawFrames.getPrices(1...100, symbols: ["big"]))
        // Read everything: every call is answered, in the order sent, once the reader keeps up.
        let ids = await RawFrames.readEnds(from: raw) { $0.count == 100 }.map(\.callID)
        #expect(ids == Array(1...100))
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("a client that shuts its writing side down still gets its unary answers; its streams end")
    func halfClose() async throws {
        // A grace no busy machine outlasts: the unary call ends when the test opens the gate.
        let running = try RunningServer { $0.shutdownGracePeriod = .seconds(600) }
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.CoinWatch/GetSettings",
                                            payload: V1.GetSettingsRequest(deviceID: "gated").serializedBytes())))
            + RawFrames.frame(.call(V1.Call(callID: 3, method: "coinwatch.v1.CoinWatch/StreamPrices",
                                            payload: V1.StreamPricesRequest().serializedBytes()))))
        #expect(await eventually { running.server.stats.startedCalls == 2 })
        raw.shutdownWrite()
        // The stream ends at once; the unary call is still running until its handler answers.
        #expect(await eventually { running.service.streamsEnded.load(ordering: .relaxed) == 1 })
        #expect(running.server.stats.openConnections == 1)
        running.service.gate.open()
        let ends = RawFrames.decode(await raw.readToEnd(limit: 16 << 20)).compactMap(\.end)
        #expect(ends.map(\.callID).sorted() == [1, 3])
        let unary = ends.first { $0.callID == 1 }
        #expect((unary?.status?.code ?? .ok) == .ok, "\(String(describing: unary))")
        let stream = ends.first { $0.callID == 3 }
        #expect(stream?.status?.code == RPCError.Code.cancelled.wire)
        #expect(stream?.status?.message == "the client closed its side")
        #expect(await eventually { running.server.stats.openConnections == 0 })
        await running.server.shutdownNow()
    }

    @Test("an answer that comes after its call ended is not sent, and its producer hears so")
    func answerAfterEnd() async throws {
        let running = try RunningServer()
        let raw = try RawClient(port: running.port)
        let save = V1.SaveSettingsRequest(deviceID: "gated").serializedBytes()
        raw.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.CoinWatch/SaveSettings", payload: save)))
            + RawFrames.frame(.call(V1.Call(callID: 3, method: "coinwatch.v1.CoinWatch/SaveSettings", payload: save)))
            + RawFrames.frame(.cancel(V1.Cancel(callID: 1))))
        #expect(await eventually { running.server.stats.startedCalls == 2 && running.server.stats.liveCalls == 1 })
        running.service.gate.open()
        let ends = await RawFrames.readEnds(from: raw) { $0.count == 2 }
        #expect(ends.first { $0.callID == 1 }?.status?.code == RPCError.Code.cancelled.wire)
        #expect((ends.first { $0.callID == 3 }?.status?.code ?? .ok) == .ok)
        #expect(await eventually { running.service.answersNotSent.load(ordering: .relaxed) == 1 })
        #expect(running.service.answersNotSent.load(ordering: .relaxed) == 1, "only the cancelled call's answer")
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("the client pings at a third of the idle timeout the server announced, not only its own interval")
    func keepaliveFollowsIdleTimeout() async throws {
        let silent = try SilentServer(welcome: V1.Welcome(protocolVersion: 1, serverName: "silent", idleTimeoutMs: 3000))
        let group = try EventLoopGroup(threads: 1)
        var options = RPCClientConnection.Options()
        // Left to itself the client would ping after 10 minutes: the server's 3 s idle timeout comes first.
        options.keepaliveInterval = .seconds(600)
        options.keepaliveTimeout = .seconds(600)
        let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: silent.port, on: group.next(), options: options)
        #expect(await eventually(timeout: .seconds(60)) { silent.pings >= 2 })
        client.close()
        await silent.shutdown()
        await group.shutdownGracefully()
    }

    @Test("the ping interval: the configured one, at most a third of the server's idle timeout, never under 1 s")
    func keepaliveInterval() {
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .seconds(30), serverIdleTimeoutMs: 0) == .seconds(30))
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .seconds(30), serverIdleTimeoutMs: 300_000) == .seconds(30))
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .seconds(30), serverIdleTimeoutMs: 20_000) == .milliseconds(6666))
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .zero, serverIdleTimeoutMs: 20_000) == .milliseconds(6666))
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .zero, serverIdleTimeoutMs: 0) == .zero)
        #expect(ClientConnectionHandler.keepaliveInterval(configured: .seconds(30), serverIdleTimeoutMs: 900) == .seconds(1))
    }

    @Test("a call larger than the server's frame limit fails by itself; the connection serves the next call")
    func oversizeCallFailsAlone() async throws {
        let running = try RunningServer { $0.maxFrameBytes = 64 << 10 }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let big = V1.GetPricesRequest(symbols: [String(repeating: "x", count: 70_000)])
        let error = await #expect(throws: RPCError.self) { try await client.unary(V1.CoinWatch.getPrices, big) }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message.hasSuffix("exceeds the server's limit of 65536 bytes") == true, "\(error?.message ?? "")")
        #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a connection closed when idle lets its running calls finish, then closes")
    func closeWhenIdle() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let call = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "gated")) }
        #expect(await eventually { running.server.stats.liveCalls == 1 })
        client.closeWhenIdle()
        #expect(!client.isUsable)
        #expect(running.server.stats.openConnections == 1)
        running.service.gate.open()
        #expect(try await call.value.settings?.deviceID == "gated")
        #expect(await eventually { running.server.stats.openConnections == 0 })
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("after a half-close, a call that does not finish within the grace period ends UNAVAILABLE and the connection closes")
    func halfCloseGrace() async throws {
        let running = try RunningServer { $0.shutdownGracePeriod = .milliseconds(200) }
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.CoinWatch/GetSettings",
                                            payload: V1.GetSettingsRequest(deviceID: "slow").serializedBytes()))))
        #expect(await eventually { running.server.stats.startedCalls == 1 })
        raw.shutdownWrite()
        let ends = RawFrames.decode(await raw.readToEnd()).compactMap(\.end)
        #expect(ends.count == 1)
        #expect(ends.first?.status?.code == RPCError.Code.unavailable.wire)
        #expect(ends.first?.status?.message == "the client closed its side before the call finished")
        #expect(await eventually { running.server.stats.openConnections == 0 && running.server.stats.liveCalls == 0 })
        await running.server.shutdownNow()
    }

    @Test("the client notices a dead server through keepalive")
    func keepaliveNoticesDeadServer() async throws {
        // A "server" that completes the handshake and then never answers anything.
        let silent = try SilentServer()
        let group = try EventLoopGroup(threads: 1)
        var options = RPCClientConnection.Options()
        options.keepaliveInterval = .milliseconds(100)
        options.keepaliveTimeout = .milliseconds(200)
        let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: silent.port, on: group.next(), options: options)
        let error = await #expect(throws: RPCError.self) {
            try await client.unary(V1.Health.check, V1.HealthCheckRequest())
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("no Pong") == true)
        await silent.shutdown()
        await group.shutdownGracefully()
    }
}

/// Answers `Hello` with `Welcome`, then ignores everything, unless told to send a `GoAway`.
final class SilentServer: Sendable {
    let server: TestServer
    /// Frames received after `Hello`, by kind, and the connection, for tests of what a client sends by itself.
    let counter = PingCounter()

    /// Pings and calls received, and the last connection.
    final class PingCounter: Sendable {
        let count = Atomic<Int>(0)
        let calls = Atomic<Int>(0)
        let connection = Mutex<Connection?>(nil)
    }

    var pings: Int { counter.count.load(ordering: .relaxed) }
    var calls: Int { counter.calls.load(ordering: .relaxed) }

    /// - Parameter welcome: what it answers `Hello` with.
    init(welcome: V1.Welcome = V1.Welcome(protocolVersion: 1, serverName: "silent")) throws {
        let counter = self.counter
        server = try TestServer { SilentDelegate(welcome: welcome, counter: counter) }
    }

    var port: Int { server.port }

    /// Sends the last connection a `GoAway` naming `lastCallID`, on its loop.
    func goAway(lastCallID: UInt64, reason: String) async {
        let connection = counter.connection.withLock { $0 }
        await onLoop(server.group.loops[0]) {
            let frame = V1.Frame(kind: .goAway(V1.GoAway(lastCallID: lastCallID, code: .unavailable, reason: reason)))
            frame.serializedBytes().withUnsafeBytes { connection?.enqueueFrame(body: $0) }
        }
    }

    func shutdown() async { await server.shutdown() }

    final class SilentDelegate: ConnectionDelegate {
        let welcome: V1.Welcome
        let counter: PingCounter
        var welcomed = false

        init(welcome: V1.Welcome, counter: PingCounter) {
            self.welcome = welcome
            self.counter = counter
        }

        func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
            guard welcomed else {
                welcomed = true
                counter.connection.withLock { $0 = connection }
                let frame = V1.Frame(kind: .welcome(welcome)).serializedBytes()
                frame.withUnsafeBytes { connection.enqueueFrame(body: $0) }
                return
            }
            switch (try? V1.Frame(serializedBytes: Array(body)))?.kind {
            case .ping?: counter.count.add(1, ordering: .relaxed)
            case .call?: counter.calls.add(1, ordering: .relaxed)
            default: break
            }
        }
    }
}
