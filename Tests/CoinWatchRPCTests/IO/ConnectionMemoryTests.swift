import CoinWatchRPC
import Testing

@Suite("Connection memory")
struct ConnectionMemoryTests {
    @Test("2,000 idle loopback connections: resident memory per connection (printed)")
    func idleConnectionMemory() async throws {
        let serverClosed = Shared(0)
        let server = try TestServer(threads: 2) { EchoDelegate(closed: serverClosed) }
        let clients = try EventLoopGroup(threads: 2, namePrefix: "test-cli")
        var connections: [Connection] = []
        var records: [Shared<Observed>] = []

        /// Opens `count` connections in batches, each doing one small round trip before going idle.
        func open(_ count: Int) async throws {
            var remaining = count
            while remaining > 0 {
                let batch = min(remaining, 200)
                remaining -= batch
                let opened = try await withThrowingTaskGroup(of: (Connection, Shared<Observed>).self) { group in
                    for _ in 0..<batch {
                        let loop = clients.next()
                        group.addTask {
                            let record = Shared(Observed())
                            let connection = try await connectStarted(port: server.port, on: loop) {
                                CollectingDelegate(record)
                            }
                            await onLoop(loop) {
                                [UInt8(1), 2, 3].withUnsafeBytes { connection.enqueueFrame(body: $0) }
                            }
                            return (connection, record)
                        }
                    }
                    var all: [(Connection, Shared<Observed>)] = []
                    for try await pair in group { all.append(pair) }
                    return all
                }
                connections += opened.map(\.0)
                records += opened.map(\.1)
                // A client's connect completes before the server accepts; wait for each batch's echo (so the server
                // has accepted it) before the next, or a starved accept loop lets the kernel's accept queue
                // overflow and later SYNs are dropped until connect times out.
                #expect(await eventually { opened.allSatisfy { $0.1.value.frames.count == 1 } })
            }
        }

        // Warm-up: grow the loops' tables and the allocator's arenas before the baseline.
        try await open(200)
        #expect(await eventually { records.allSatisfy { $0.value.frames.count == 1 } })
        let baseline = residentBytes()
        let count = 2000
        try await open(count)
        #expect(await eventually { records.allSatisfy { $0.value.frames.count == 1 } })
        let after = residentBytes()
        let perConnection = Double(after - baseline) / Double(2 * count)
        print("idle connections: \(count) pairs (\(2 * count) Connection objects), RSS \(baseline / 1024) KiB -> "
              + "\(after / 1024) KiB, \(Int(perConnection)) bytes per connection")
        #expect(baseline > 0 && after > 0)
        // Generous bound (the target is 8 KiB); kernel socket buffers are not in RSS.
        #expect(perConnection < 32 * 1024)

        for connection in connections {
            connection.eventLoop.execute { connection.close() }
        }
        #expect(await eventually { serverClosed.value == connections.count })
        await clients.shutdownGracefully()
        await server.shutdown()
    }
}
