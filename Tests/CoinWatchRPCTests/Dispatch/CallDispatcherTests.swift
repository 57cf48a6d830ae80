import CoinWatchMetrics
import CoinWatchProto
import Synchronization
import Testing
@testable import CoinWatchRPC

/// The dispatcher every transport shares: the authorization hook runs before any handler, refusals and
/// answers are counted per method and transport, and the counters are summed over the loops on a scrape.
@Suite(.timeLimit(.minutes(3)))
struct CallDispatcherTests {
    /// Refuses calls about the device "intruder" and every call without a credential to SaveSettings; records
    /// what it was asked.
    final class RecordingAuthorizer: CallAuthorizer {
        let seen = Mutex<[String]>([])

        func authorize(_ request: CallAuthorizationRequest) throws(RPCError) {
            let device = request.stringField([1]) ?? ""
            seen.withLock { $0.append("\(request.method) \(request.context.transport) \(device)") }
            if device == "intruder" {
                throw RPCError(code: .permissionDenied, message: "not your device")
            }
            if request.method.hasSuffix("/SaveSettings") && request.context.bearerTokens.isEmpty {
                throw RPCError(code: .unauthenticated, message: "SaveSettings needs a credential")
            }
        }
    }

    @Test("the authorizer sees every call before its handler and its refusal is the call's status")
    func authorizerRunsBeforeHandlers() async throws {
        let authorizer = RecordingAuthorizer()
        let running = try RunningServer(authorizer: authorizer)
        let group = try EventLoopGroup(threads: 1)
        let client = try await running.connect(group: group)

        let allowed = try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "mine"))
        #expect(allowed.settings?.deviceID == "mine")
        await #expect(throws: RPCError(code: .permissionDenied, message: "not your device")) {
            _ = try await client.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "intruder"))
        }
        // Inline methods pass through the same hook.
        await #expect(throws: RPCError(code: .permissionDenied, message: "not your device")) {
            _ = try await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: ["intruder"]))
        }
        await #expect(throws: RPCError(code: .unauthenticated, message: "SaveSettings needs a credential")) {
            _ = try await client.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "mine"))
        }
        let saved = try await client.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "mine"),
                                           metadata: ["authorization": "Bearer k"])
        #expect(saved.settings?.version == 2)
        // Streams too: refused before the first message.
        var updates = 0
        await #expect(throws: RPCError(code: .permissionDenied, message: "not your device")) {
            for try await _ in client.serverStream(V1.CoinWatch.streamAlerts, V1.StreamAlertsRequest(deviceID: "intruder")) {
                updates += 1
            }
        }
        #expect(updates == 0)
        let seen = authorizer.seen.withLock { $0 }
        #expect(seen.contains("coinwatch.v1.CoinWatch/GetSettings native mine"))
        #expect(seen.contains("coinwatch.v1.CoinWatch/StreamAlerts native intruder"))
        #expect(running.server.stats.liveCalls == 0)

        client.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("calls are counted per method, status and transport, from 0, across loops")
    func metricsCountCalls() async throws {
        let running = try RunningServer()
        let group = try EventLoopGroup(threads: 1)
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            let family = running.server.metrics.collect().first { $0.name == name }
            return family?.samples.first { sample in
                labels.allSatisfy { key, value in sample.labels.contains(MetricLabel(key, value)) }
            }?.value
        }
        let getPrices = ["grpc_service": "coinwatch.v1.CoinWatch", "grpc_method": "GetPrices", "transport": "native"]
        #expect(value("grpc_server_started_total", getPrices) == 0)
        #expect(value("grpc_server_handled_total", getPrices.merging(["grpc_code": "FailedPrecondition"]) { $1 }) == 0)

        // Two clients, so both loops count (connections are spread round-robin).
        let clients = [try await running.connect(group: group), try await running.connect(group: group)]
        for client in clients {
            _ = try await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: ["BTC"]))
            _ = try? await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: ["fail"]))
            _ = try await client.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(deviceID: "d"))
            var received = 0
            for try await _ in client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(minIntervalMs: 3)) {
                received += 1
            }
            #expect(received == 3)
        }
        #expect(value("grpc_server_started_total", getPrices) == 4)
        #expect(value("grpc_server_handled_total", getPrices.merging(["grpc_code": "OK"]) { $1 }) == 2)
        #expect(value("grpc_server_handled_total", getPrices.merging(["grpc_code": "FailedPrecondition"]) { $1 }) == 2)
        #expect(value("grpc_server_msg_received_total", getPrices) == 4)
        #expect(value("grpc_server_msg_sent_total", getPrices) == 2)
        let stream = ["grpc_type": "server_stream", "grpc_method": "StreamPrices", "transport": "native"]
        #expect(value("grpc_server_msg_sent_total", stream) == 6)
        #expect(value("grpc_server_handled_total", stream.merging(["grpc_code": "OK"]) { $1 }) == 2)
        let save = ["grpc_method": "SaveSettings", "transport": "native"]
        #expect(value("grpc_server_msg_sent_total", save) == 2)
        let histogram = running.server.metrics.collect().first { $0.name == "grpc_server_handling_seconds" }?
            .histograms.first { $0.labels.contains(MetricLabel("grpc_method", "SaveSettings")) }
        #expect(histogram?.count == 2)
        #expect(value("coinwatch_connections_open", ["transport": "native"]) == 2)
        #expect(running.server.stats.startedCalls == 8)

        for client in clients { client.close() }
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }

    @Test("bearer credentials: the scheme in any case or the bare token, metadata before Hello")
    func bearerTokens() {
        #expect(ServerContext.bearerToken("Bearer abc") == "abc")
        #expect(ServerContext.bearerToken("bearer  abc") == "abc")
        #expect(ServerContext.bearerToken("BEARER abc") == "abc")
        #expect(ServerContext.bearerToken("abc") == "abc")
        #expect(ServerContext.bearerToken("Bearer") == "Bearer")
        #expect(ServerContext.bearerToken("Basic abc") == "Basic abc")
        let context = ServerContext(method: "m", metadata: ["authorization": "Bearer one"], authToken: "two")
        #expect(context.bearerTokens == ["one", "two"])
        #expect(ServerContext(method: "m").bearerTokens.isEmpty)
    }

    @Test("stringField reads nested and repeated fields, and refuses malformed bytes")
    func stringFields() {
        let save = V1.SaveSettingsRequest(deviceID: "dev-1").serializedBytes()
        save.withUnsafeBytes { bytes in
            let request = CallAuthorizationRequest(method: "m", context: ServerContext(method: "m"), payload: bytes)
            #expect(request.stringField([1]) == "dev-1")
            #expect(request.stringField([9]) == nil)
        }
        let nested = V1.GetSettingsResponse(settings: V1.Settings(deviceID: "inner", version: 7)).serializedBytes()
        nested.withUnsafeBytes { bytes in
            let request = CallAuthorizationRequest(method: "m", context: ServerContext(method: "m"), payload: bytes)
            #expect(request.stringField([1, 1]) == "inner")
        }
        let broken: [UInt8] = [0x0a, 0x05, 0x61]
        broken.withUnsafeBytes { bytes in
            let request = CallAuthorizationRequest(method: "m", context: ServerContext(method: "m"), payload: bytes)
            #expect(request.stringField([1]) == nil)
        }
    }
}
