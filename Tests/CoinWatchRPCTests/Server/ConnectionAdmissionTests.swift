import CoinWatchProto
import Synchronization
import Testing
@testable import CoinWatchRPC

/// The server's per-connection admission and its stream observation, the two seams the authoriser plugs into
/// beside the call hook.
@Suite("connection admission and stream observation", .serialized)
struct ConnectionAdmissionTests {
    /// Admits the first `limit` connections at a time, counting what it was told.
    final class CountingAdmission: ConnectionAdmission {
        let limit: Int
        let open = Atomic<Int>(0)
        let closedCount = Atomic<Int>(0)
        let peers = Mutex<[String]>([])

        init(limit: Int) { self.limit = limit }

        func admit(peer: String) -> RPCError? {
            peers.withLock { $0.append(peer) }
            guard open.load(ordering: .relaxed) < limit else {
                return RPCError(code: .resourceExhausted, message: "too many connections from \(peer)")
            }
            open.add(1, ordering: .relaxed)
            return nil
        }

        func closed(peer: String) {
            open.subtract(1, ordering: .relaxed)
            closedCount.add(1, ordering: .relaxed)
        }
    }

    @Test("a refused connection gets the admission's error and is closed; an admitted one is reported when it closes")
    func admission() async throws {
        let admission = CountingAdmission(limit: 1)
        let running = try RunningServer { $0.admission = admission }
        let group = try EventLoopGroup(threads: 1, namePrefix: "admission-test")
        defer { group.syncShutdownGracefully() }
        let first = try await running.connect(group: group)
        _ = try await first.unary(V1.Health.check, V1.HealthCheckRequest())
        let error = await #expect(throws: RPCError.self) { try await running.connect(group: group) }
        #expect(error?.message.contains("too many connections from 127.0.0.1:") == true, "\(String(describing: error))")
        #expect(admission.peers.withLock { $0 }.allSatisfy { $0.hasPrefix("127.0.0.1:") })
        first.close()
        for _ in 0..<3000 where admission.closedCount.load(ordering: .relaxed) < 1 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(admission.closedCount.load(ordering: .relaxed) == 1)
        // The refused connection was never counted, so the slot is free again.
        let again = try await running.connect(group: group)
        _ = try await again.unary(V1.Health.check, V1.HealthCheckRequest())
        again.close()
        await running.server.shutdownNow()
    }

    @Test("observingStreams tells of each stream before its handler runs, and leaves other methods alone")
    func observedStreams() async throws {
        let seen = Mutex<[String]>([])
        let service = TestService()
        let methods = service.methods.map { method in
            method.observingStreams { stream in seen.withLock { $0.append(stream.context.method) } }
        }
        var configuration = RPCServer.Configuration()
        configuration.port = 0
        configuration.eventLoopThreads = 1
        let server = try RPCServer(configuration: configuration, methods: methods)
        try server.start()
        let group = try EventLoopGroup(threads: 1, namePrefix: "observe-test")
        defer { group.syncShutdownGracefully() }
        let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())
        _ = try await client.unary(V1.Health.check, V1.HealthCheckRequest())
        var count = 0
        for try await _ in client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(minIntervalMs: 2)) {
            count += 1
        }
        #expect(count == 2)
        #expect(seen.withLock { $0 } == [V1.CoinWatch.streamPrices.path])
        client.close()
        await server.shutdownNow()
    }
}
