import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchRPC

@Suite("RPC calls end to end")
struct RPCServerCallTests {
    @Test("handshake announces limits and methods; inline, async and deferred unary calls answer")
    func unaryShapes() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        #expect(client.welcome.protocolVersion == 1)
        #expect(client.welcome.maxFrameBytes == 4 << 20)
        #expect(client.welcome.methods.contains("coinwatch.v1.CoinWatch/GetSettings"))

        let health = try await client.unary(V1.Health.check, V1.HealthCheckRequest())
        #expect(health.status == .serving)
        let settings = try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
        #expect(settings.settings?.deviceID == "phone-1")
        let saved = try await client.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "phone-2"))
        #expect(saved.settings?.version == 2)
        let error = await #expect(throws: RPCError.self) {
            try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "missing"))
        }
        #expect(error == RPCError(code: .notFound, message: "no settings for device 'missing'"))

        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("inline methods answer from the handler's bytes: once, with its error, or INTERNAL when it does not answer")
    func inlineBytes() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let before = running.server.stats.startedCalls
        func prices(_ symbols: [String], timeout: Duration? = nil, metadata: [String: String] = [:]) async throws -> [String] {
            try await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: symbols), timeout: timeout,
                                   metadata: metadata).prices.map(\.symbol)
        }
        #expect(try await prices(["BTC", "ETH"]) == ["BTC", "ETH"])
        #expect(try await prices(["twice", "x"]) == ["twice", "x"])
        #expect(try await prices(["late-throw"]) == ["late-throw"])
        // With a deadline or metadata the call takes the general path, with its own context.
        #expect(try await prices(["BTC"], timeout: .seconds(30)) == ["BTC"])
        #expect(try await prices(["BTC"], metadata: ["request-id": "7"]) == ["BTC", "request-id=7"])
        let failed = await #expect(throws: RPCError.self) { try await prices(["fail"]) }
        #expect(failed == RPCError(code: .failedPrecondition, message: "asked to fail"))
        let silent = await #expect(throws: RPCError.self) { try await prices(["none"]) }
        #expect(silent == RPCError(
            code: .internal, message: "the handler of coinwatch.v1.CoinWatch/GetPrices returned without an answer"))
        let invalid = await #expect(throws: RPCError.self) {
            try await client.unary(method: V1.CoinWatch.getPrices.path, payload: [0xFF, 0xFF])
        }
        #expect(invalid?.code == .invalidArgument)
        // Inline calls are counted as started and never stay live.
        #expect(running.server.stats.startedCalls - before == 8)
        #expect(running.server.stats.liveCalls == 0)
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("1,000 concurrent unary calls on one connection are all answered correctly")
    func thousandConcurrent() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { tasks in
            for index in 0..<1_000 {
                tasks.addTask {
                    let method = index % 2 == 0 ? "coinwatch.v1.CoinWatch/GetSettings" : "coinwatch.v1.CoinWatch/SaveSettings"
                    let payload = V1.GetSettingsRequest(deviceID: "device-\(index)").serializedBytes()
                    let bytes = try await client.unary(method: method, payload: payload)
                    let response = try V1.GetSettingsResponse(serializedBytes: bytes)
                    return (index, response.settings?.deviceID ?? "")
                }
            }
            var answers: [Int: String] = [:]
            for try await (index, device) in tasks { answers[index] = device }
            return answers
        }
        #expect(answers.count == 1_000)
        #expect(answers.allSatisfy { $0.value == "device-\($0.key)" })
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 0 })
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("200 connections at once are served")
    func manyConnections() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 2)
        let served = try await withThrowingTaskGroup(of: Bool.self) { tasks in
            for index in 0..<200 {
                tasks.addTask {
                    let client = try await running.connect(group: group)
                    defer { client.close() }
                    let response = try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "d\(index)"))
                    return response.settings?.deviceID == "d\(index)"
                }
            }
            var count = 0
            for try await ok in tasks where ok { count += 1 }
            return count
        }
        #expect(served == 200)
        #expect(running.server.stats.acceptedConnections == 200)
        #expect(await eventually { running.server.stats.openConnections == 0 })
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a stream and unary calls interleave on one connection")
    func streamAndUnaryInterleaved() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let stream = client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(minIntervalMs: 0))
        var sequences: [UInt64] = []
        for try await update in stream {
            sequences.append(update.sequence)
            let answer = try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "u\(update.sequence)"))
            #expect(answer.settings?.deviceID == "u\(update.sequence)")
            if sequences.count == 20 { break }
        }
        #expect(sequences == Array(1...20))
        // Leaving the loop cancelled the stream on the server.
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 0 })
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a finite stream ends OK after its messages")
    func finiteStream() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        var received: [UInt64] = []
        for try await update in client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(minIntervalMs: 50)) {
            received.append(update.sequence)
        }
        #expect(received == Array(1...50))
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("the server enforces deadlines and frees the call")
    func deadline() async throws {
        let running = try RunningServer()
        // A raw socket, with no client timer: the End can only be the server's.
        let raw = try RawClient(port: running.port)
        raw.send(RawFrames.hello
            + RawFrames.frame(.call(V1.Call(callID: 1, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 150,
                                            payload: V1.GetSettingsRequest(deviceID: "slow").serializedBytes()))))
        let end = await RawFrames.readEnds(from: raw) { !$0.isEmpty }.first
        #expect(end?.callID == 1)
        #expect(end?.status?.code == RPCError.Code.deadlineExceeded.wire)
        #expect(end?.status?.message == "deadline of 150 ms exceeded")
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 0 })
        // The connection keeps serving.
        raw.send(RawFrames.frame(.call(V1.Call(callID: 3, method: "coinwatch.v1.Health/Check",
                                               payload: V1.HealthCheckRequest().serializedBytes()))))
        let health = await RawFrames.readEnds(from: raw) { !$0.isEmpty }.first
        #expect(health?.callID == 3)
        #expect((health?.status?.code ?? .ok) == .ok)
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("cancelling a call stops its handler and ends it CANCELLED")
    func cancel() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let task = Task {
            try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow"))
        }
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 1 })
        task.cancel()
        let error = await #expect(throws: RPCError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 0 })
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a task cancelled before its call started fails CANCELLED and sends nothing", .timeLimit(.minutes(2)))
    func cancelledBeforeStart() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let task = Task {
            // Cancelled before the call exists: its cancellation handler runs first and finds no call id.
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow"))
        }
        let error = await #expect(throws: RPCError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message == "cancelled by the caller")
        // Nothing was sent: the next call is the first the server sees on this connection.
        #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        #expect(running.server.stats.startedCalls == 1)
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a client that disconnects mid-stream frees the server's call state")
    func disconnectFreesState() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        var iterator = client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest()).makeAsyncIterator()
        _ = try await iterator.next()
        #expect(running.server.stats.liveCalls == 1)
        client.close()
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 0 && running.server.stats.openConnections == 0 })
        #expect(await eventually { running.service.streamsEnded.load(ordering: .relaxed) == 1 })
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("call errors end that call only; the connection keeps serving")
    func callErrors() async throws {
        let running = try RunningServer { $0.maxConcurrentCallsPerConnection = 2 }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)

        let unknown = await #expect(throws: RPCError.self) { try await client.unary(method: "coinwatch.v1.Nope/Nothing", payload: []) }
        #expect(unknown == RPCError(code: .unimplemented, message: "unknown method 'coinwatch.v1.Nope/Nothing'"))

        let garbage = await #expect(throws: RPCError.self) {
            try await client.unary(method: "coinwatch.v1.CoinWatch/GetSettings", payload: [0x0A, 0x05, 0x41])
        }
        #expect(garbage?.code == .invalidArgument)
        #expect(garbage?.message.hasPrefix("payload is not a valid coinwatch.v1.GetSettingsRequest") == true)

        let slow1 = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow")) }
        let slow2 = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow")) }
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 2 })
        slow1.cancel()
        slow2.cancel()
        _ = await (slow1.result, slow2.result)
        #expect(try await client.unary(V1.Health.check, V1.HealthCheckRequest()).status == .serving)
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("the server ends a call past max_concurrent_calls RESOURCE_EXHAUSTED and keeps the connection")
    func callLimitOnTheWire() async throws {
        let running = try RunningServer { $0.maxConcurrentCallsPerConnection = 2 }
        let raw = try RawClient(port: running.port)
        let slow = V1.GetSettingsRequest(deviceID: "slow").serializedBytes()
        raw.send(RawFrames.hello + (1...3).flatMap {
            RawFrames.frame(.call(V1.Call(callID: $0, method: "coinwatch.v1.CoinWatch/GetSettings", payload: slow)))
        })
        let refused = await RawFrames.readEnds(from: raw) { !$0.isEmpty }.first
        #expect(refused?.callID == 3)
        #expect(refused?.status?.code == RPCError.Code.resourceExhausted.wire)
        #expect(refused?.status?.message == "more than 2 calls in flight on this connection")
        raw.send(RawFrames.frame(.cancel(V1.Cancel(callID: 1)))
            + RawFrames.frame(.call(V1.Call(callID: 4, method: "coinwatch.v1.Health/Check",
                                            payload: V1.HealthCheckRequest().serializedBytes()))))
        let after = await RawFrames.readEnds(from: raw) { $0.contains { $0.callID == 4 } }
        #expect(after.first { $0.callID == 4 }.map { ($0.status?.code ?? .ok) == .ok } == true)
        raw.close()
        await running.server.shutdownNow()
    }

    @Test("the client holds calls past the server's max_concurrent_calls and sends them, in order, as calls end")
    func clientHoldsCallsPastTheLimit() async throws {
        let running = try RunningServer { $0.maxConcurrentCallsPerConnection = 2 }
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)
        let slow1 = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow")) }
        let slow2 = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow")) }
        #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 2 })
        let third = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "third")) }
        #expect(await eventually(timeout: .seconds(120)) { client.heldCalls == 1 })
        let fourth = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "fourth")) }
        #expect(await eventually(timeout: .seconds(120)) { client.heldCalls == 2 })
        // Held, not refused: the server has seen only the two slow calls.
        #expect(running.server.stats.startedCalls == 2)
        slow1.cancel()
        #expect(try await third.value.settings?.deviceID == "third")
        #expect(try await fourth.value.settings?.deviceID == "fourth")
        #expect(client.heldCalls == 0)
        slow2.cancel()
        _ = await (slow1.result, slow2.result)
        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("a held call that is cancelled or outlives its deadline ends without reaching the server")
    func heldCallsEndOnTheClient() async throws {
        let fixture = try await OneCallServer.start()
        let (running, client, slow, cancelled) = (fixture.running, fixture.client, fixture.sent, fixture.held)
        cancelled.cancel()
        let cancelError = await #expect(throws: RPCError.self) { try await cancelled.value }
        #expect(cancelError?.code == .cancelled)
        let expired = await #expect(throws: RPCError.self) {
            try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "b"), timeout: .milliseconds(50))
        }
        #expect(expired == RPCError(code: .deadlineExceeded, message: "deadline of 50 ms exceeded"))
        #expect(client.heldCalls == 0)
        #expect(running.server.stats.startedCalls == 1)
        // The slow call's room goes to the next call, not to the two that ended.
        slow.cancel()
        _ = await slow.result
        #expect(try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "c")).settings?.deviceID == "c")
        #expect(running.server.stats.startedCalls == 2)
        await fixture.stop()
    }

    @Test("when the connection ends, a held call is marked as never started, and a sent one is not")
    func connectionEndMarksHeldCalls() async throws {
        let fixture = try await OneCallServer.start()
        fixture.client.close()
        let sentError = await #expect(throws: RPCError.self) { try await fixture.sent.value }
        let heldError = await #expect(throws: RPCError.self) { try await fixture.held.value }
        #expect(sentError?.notProcessed == false, "the server may have started it")
        #expect(heldError?.notProcessed == true)
        #expect(fixture.running.server.stats.startedCalls == 1)
        await fixture.stop()
    }

    /// A server running one call per connection, and a client connection with one call sent ("slow", which the
    /// server holds until cancelled) and one held by the client behind it ("a").
    struct OneCallServer {
        let running: RunningServer
        let group: EventLoopGroup
        let client: RPCClientConnection
        let sent: Task<V1.GetSettingsResponse, any Error>
        let held: Task<V1.GetSettingsResponse, any Error>

        static func start() async throws -> OneCallServer {
            let running = try RunningServer { $0.maxConcurrentCallsPerConnection = 1 }
            let group = try EventLoopGroup(threads: 1)
            let client = try await running.connect(group: group)
            let sent = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "slow")) }
            #expect(await eventually(timeout: .seconds(120)) { running.server.stats.liveCalls == 1 })
            let held = Task { try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "a")) }
            #expect(await eventually(timeout: .seconds(120)) { client.heldCalls == 1 })
            return OneCallServer(running: running, group: group, client: client, sent: sent, held: held)
        }

        func stop() async {
            client.close()
            await running.server.shutdownNow()
            await group.shutdownGracefully()
        }
    }

    @Test("a GoAway ends every held call, one whose id is below the server's last accepted one too")
    func goAwayEndsEveryHeldCall() async throws {
        let silent = try SilentServer(welcome: V1.Welcome(protocolVersion: 1, serverName: "silent", maxConcurrentCalls: 1))
        let group = try EventLoopGroup(threads: 1)
        // The silent server answers no ping: keepalive, which would close the connection and end the calls its own
        // way, must not come first however slow the steps before the GoAway are.
        var options = RPCClientConnection.Options()
        options.keepaliveInterval = .seconds(3600)
        let client = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: silent.port, on: group.next(), options: options)
        let sent = Task { try await client.unary(V1.Health.check, V1.HealthCheckRequest()) }
        #expect(await eventually(timeout: .seconds(120)) { silent.calls == 1 })
        let held = Task { try await client.unary(V1.Health.check, V1.HealthCheckRequest()) }
        #expect(await eventually(timeout: .seconds(120)) { client.heldCalls == 1 })
        // A last id above both calls': as when ids were taken in another order than the calls reached the loop, the
        // held call's id is below it. It must end all the same, and not be sent to a server going away.
        await silent.goAway(lastCallID: 1_000, reason: "draining")
        let ended = await eventually(timeout: .seconds(120)) { client.heldCalls == 0 }
        #expect(ended, "the GoAway ended the held call")
        // Were it still held, closing ends it (with another message), so the test fails instead of waiting forever.
        if !ended { client.close() }
        let heldError = await #expect(throws: RPCError.self) { try await held.value }
        #expect(heldError?.code == .unavailable)
        #expect(heldError?.message.hasSuffix(" is going away: draining") == true, "\(String(describing: heldError))")
        #expect(heldError?.notProcessed == true)
        #expect(silent.calls == 1, "the held call never went to the server")
        client.close()
        _ = await sent.result
        await silent.shutdown()
        await group.shutdownGracefully()
    }
}
