import CoinWatchConnect
import CoinWatchMetrics
import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchHTTP
@testable import CoinWatchRPC

/// HTTP on the RPC port, end to end over loopback: the sniff, HTTP/1.1's keep-alive, pipelining, limits and
/// timeouts, the operators' endpoints, and the native protocol still served beside them.
@Suite(.timeLimit(.minutes(2)))
struct HTTPServerTests {
    /// An RPC server with one inline method and HTTP on its port.
    struct Running {
        let server: RPCServer
        let http: HTTPServer
        let serving: Flag

        static let healthCheck: RPCMethod = .unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) })

        init(requestTimeout: Duration = .seconds(10), methods: [RPCMethod] = [healthCheck], corsOrigins: [String] = [],
             configure: (inout RPCServer.Configuration) -> Void = { _ in }) throws {
            var configuration = RPCServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopThreads = 1
            configure(&configuration)
            server = try RPCServer(configuration: configuration, methods: methods)
            let registry = MetricsRegistry()
            registry.register(server.metrics)
            let serving = Flag()
            self.serving = serving
            var httpConfiguration = HTTPServer.Configuration(metrics: registry, isServing: { serving.value.load(ordering: .relaxed) })
            httpConfiguration.requestTimeout = requestTimeout
            httpConfiguration.cors = CORSPolicy(allowedOrigins: corsOrigins)
            http = HTTPServer(rpc: server, configuration: httpConfiguration)
            try server.start()
        }
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(true)
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// Reads `count` responses (to HEAD requests at the indices in `heads`, which carry no body).
    static func read(_ count: Int, from client: RawClient, heads: Set<Int> = []) async -> [Response] {
        var buffer: [UInt8] = []
        var responses: [Response] = []
        while responses.count < count {
            if let end = buffer.indices.dropLast(3).first(where: { buffer[$0..<($0 + 4)] == [13, 10, 13, 10] }) {
                let head = String(decoding: buffer[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    headers[parts[0].lowercased()] = parts.count > 1 ? String(parts[1].dropFirst()) : ""
                }
                let length = heads.contains(responses.count) ? 0 : Int(headers["content-length"] ?? "0")!
                if buffer.count >= end + 4 + length {
                    let status = Int(head[0].split(separator: " ")[1])!
                    let body = String(decoding: buffer[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    responses.append(Response(status: status, headers: headers, body: body))
                    buffer.removeFirst(end + 4 + length)
                    continue
                }
            }
            let more = await client.readSome()
            if more.isEmpty { break }
            buffer += more
        }
        return responses
    }

    /// The RPC server keeps the HTTP server as its handler of other protocols; were the reference back strong, the
    /// pair, their event loops and dispatcher would live as long as the process.
    @Test("a server that stopped, and the HTTP server on its port, are let go once nobody holds them")
    func aStoppedServerIsLetGo() async throws {
        weak var server: RPCServer?
        weak var http: HTTPServer?
        do {
            let running = try Running()
            let port = running.server.port
            let client = try RawClient(port: port)
            client.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let answer = String(decoding: await client.readToEnd(), as: UTF8.self)
            client.close()
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            await running.server.shutdownGracefully()
            server = running.server
            http = running.http
        }
        // A loop's thread may still be returning from the closure that holds its loop.
        _ = await eventually(timeout: .seconds(30)) { server == nil && http == nil }
        #expect(server == nil)
        #expect(http == nil)
    }

    @Test("pipelined HTTP/1.1 requests are answered in order on one keep-alive connection")
    func pipelining() async throws {
        let running = try Running()
        let client = try RawClient(port: running.server.port)
        client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\nPOST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let responses = await Self.read(4, from: client, heads: [2])
        #expect(responses.map(\.status) == [200, 404, 200, 405])
        #expect(responses[0].body == "ok\n")
        #expect(responses[2].headers["content-type"] == PrometheusText.contentType)
        #expect(responses[3].headers["allow"] == "GET, HEAD")
        // Still open: one more request on the same connection.
        client.send("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await Self.read(1, from: client).map(\.status) == [200])
        running.serving.value.store(false, ordering: .relaxed)
        client.send("GET /readyz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let closing = await Self.read(1, from: client)
        #expect(closing.map(\.status) == [503])
        #expect(closing.first?.headers["connection"] == "close")
        #expect(await client.readSome().isEmpty)
        await running.server.shutdownNow()
    }

    /// Admits one connection at a time, counting the ones it was told closed.
    final class OneAtATime: ConnectionAdmission {
        let open = Atomic<Int>(0)

        func admit(peer: String) -> RPCError? {
            guard open.load(ordering: .relaxed) < 1 else {
                return RPCError(code: .resourceExhausted, message: "too many connections from \(peer)")
            }
            open.add(1, ordering: .relaxed)
            return nil
        }

        func closed(peer: String) {
            open.subtract(1, ordering: .relaxed)
        }
    }

    @Test("an HTTP connection counts against the per-peer admission until it closes, like a native one")
    func admissionCoversHTTP() async throws {
        let admission = OneAtATime()
        let running = try Running { $0.admission = admission }
        let first = try RawClient(port: running.server.port)
        first.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await Self.read(1, from: first).map(\.status) == [200])
        // Handed to HTTP and still open: the peer's one place is taken.
        #expect(admission.open.load(ordering: .relaxed) == 1)
        // A second connection from the peer is refused, in HTTP: 503 with the admission's reason.
        let second = try RawClient(port: running.server.port)
        second.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = await Self.read(1, from: second)
        #expect(refused.map(\.status) == [503])
        #expect(refused.first?.body.hasPrefix("too many connections from 127.0.0.1:") == true)
        #expect(refused.first?.headers["connection"] == "close" && refused.first?.headers["retry-after"] == "1")
        #expect(await second.readSome().isEmpty, "and the connection closes")
        second.close()
        // Over HTTP/2 (a gRPC client's prior knowledge), the refusal is the server's SETTINGS and a GOAWAY that
        // processed no stream, ENHANCE_YOUR_CALM, with the reason as its debug data.
        let overHTTP2 = try RawClient(port: running.server.port)
        overHTTP2.send(HTTP2RawFrames.preface + HTTP2RawFrames.settings([]))
        var splitter = HTTP2FrameSplitter(maxFrameBytes: 1 << 14)
        var frames: [(type: UInt8, payload: [UInt8])] = []
        await overHTTP2.readToEnd().withUnsafeBytes { bytes in
            try? splitter.feed(bytes) { header, payload in frames.append((header.type, Array(payload))) }
        }
        #expect(frames.map(\.type) == [HTTP2RawFrames.FrameType.settings, HTTP2RawFrames.FrameType.goAway])
        let goAway = frames.last?.payload ?? []
        #expect(goAway.prefix(8).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0x0b]))
        #expect(String(decoding: goAway.dropFirst(8), as: UTF8.self).hasPrefix("too many connections from 127.0.0.1:"))
        overHTTP2.close()
        // A client that sends nothing gets the native refusal once the wait is over, and the connection closes.
        let silent = try RawClient(port: running.server.port)
        let native = await silent.readToEnd()
        #expect(native.count > 4)
        let frame = try? V1.Frame(serializedBytes: Array(native.dropFirst(4)), maxBytes: 1 << 16)
        guard case .error(let error)? = frame?.kind else {
            Issue.record("expected a ConnectionError frame, got \(native)")
            return
        }
        #expect(error.message.hasPrefix("too many connections from 127.0.0.1:"))
        silent.close()
        // A native client whose first frame is not even a Frame is told the refusal, not what is wrong with it.
        let garbled = try RawClient(port: running.server.port)
        garbled.send([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
        let answer = await garbled.readToEnd()
        let refusal = try? V1.Frame(serializedBytes: Array(answer.dropFirst(4)), maxBytes: 1 << 16)
        guard case .error(let refused)? = refusal?.kind else {
            Issue.record("expected a ConnectionError frame, got \(answer)")
            return
        }
        #expect(refused.message.hasPrefix("too many connections from 127.0.0.1:"))
        garbled.close()
        first.close()
        #expect(await eventually { admission.open.load(ordering: .relaxed) == 0 })
        let third = try RawClient(port: running.server.port)
        third.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await Self.read(1, from: third).map(\.status) == [200])
        third.close()
        await running.server.shutdownNow()
    }

    @Test("RPC paths over HTTP/1.1: gRPC needs HTTP/2, everything else is the Connect protocol's")
    func rpcPathsOverHTTP1() async throws {
        let running = try Running()
        let client = try RawClient(port: running.server.port)
        let path = "/coinwatch.v1.Health/Check"
        client.send("POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/grpc\r\nContent-Length: 0\r\n\r\n"
                    + "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                    + "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n"
                    + "PUT \(path) HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let responses = await Self.read(4, from: client)
        #expect(responses.map(\.status) == [415, 200, 415, 405])
        #expect(responses[0].body.contains("gRPC needs HTTP/2"))
        #expect(responses[0].headers["accept-post"]?.contains("application/json") == true)
        #expect(responses[1].body == #"{"status":"SERVING"}"#)
        #expect(responses[2].headers["accept-post"] == "application/proto, application/json")
        #expect(responses[3].headers["allow"] == "POST, GET")
        await running.server.shutdownNow()
    }

    @Test("a malformed request gets 400 and the connection closes; a slow one gets 408")
    func refusals() async throws {
        let running = try Running(requestTimeout: .milliseconds(300))
        let bad = try RawClient(port: running.server.port)
        bad.send("GET / HTTP/1.1\r\nHost : t\r\n\r\n")
        let refused = await Self.read(1, from: bad)
        #expect(refused.map(\.status) == [400])
        #expect(refused.first?.body.contains("whitespace before") == true)
        #expect(await bad.readSome().isEmpty)
        let slow = try RawClient(port: running.server.port)
        slow.send("GET /healthz HTTP/1.1\r\nHo")
        let timedOut = await Self.read(1, from: slow)
        #expect(timedOut.map(\.status) == [408])
        #expect(await slow.readSome().isEmpty)
        await running.server.shutdownNow()
    }

    @Test("a keep-alive connection in use stays open past the idle timeout; left alone, it closes")
    func idleTimeout() async throws {
        let idle = Duration.milliseconds(400)
        let running = try Running(configure: { $0.idleTimeout = idle })
        let client = try RawClient(port: running.server.port)
        let start = ContinuousClock.now
        var lastSend = start
        var longestGap = Duration.zero
        while ContinuousClock.now - start < idle * 3 {
            client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            longestGap = max(longestGap, ContinuousClock.now - lastSend)
            lastSend = ContinuousClock.now
            guard await Self.read(1, from: client).map(\.status) == [200] else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Requests every 50 ms for three idle timeouts were all answered, unless the machine held one gap between
        // them past the timeout (then closing was right).
        #expect(ContinuousClock.now - start >= idle * 3 || longestGap >= idle)
        #expect(await client.readSome().isEmpty)
        await running.server.shutdownNow()
    }

    @Test("native and HTTP connections share the port, each counted by what it speaks")
    func sharedPort() async throws {
        let running = try Running()
        let group = try EventLoopGroup(threads: 1)
        let native = try await RPCClientConnection.connect(host: "127.0.0.1", port: running.server.port, on: group.next())
        let answer = try await native.unary(V1.Health.check, V1.HealthCheckRequest())
        #expect(answer.status == .serving)
        let client = try RawClient(port: running.server.port)
        client.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        let metrics = await Self.read(1, from: client).first?.body ?? ""
        #expect(metrics.contains("coinwatch_connections_open{transport=\"native\"} 1\n"))
        #expect(metrics.contains("coinwatch_connections_open{transport=\"http1\"} 1\n"))
        #expect(metrics.contains("coinwatch_connections_open{transport=\"http2\"} 0\n"))
        #expect(metrics.contains("grpc_server_started_total{grpc_type=\"unary\",grpc_service=\"coinwatch.v1.Health\","
                                 + "grpc_method=\"Check\",transport=\"native\"} 1\n"))
        #expect(metrics.contains("grpc_server_started_total{grpc_type=\"unary\",grpc_service=\"coinwatch.v1.Health\","
                                 + "grpc_method=\"Check\",transport=\"grpc\"} 0\n"))
        native.close()
        await running.server.shutdownNow()
        await group.shutdownGracefully()
    }
}
