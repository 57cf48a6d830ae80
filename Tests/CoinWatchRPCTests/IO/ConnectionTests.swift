import CoinWatchRPC
import CoinWatchTestSupport
import Testing

@Suite("Connection")
struct ConnectionTests {
    @Test("frames of many sizes round-trip through an echo server")
    func echo() async throws {
        let server = try TestServer(threads: 2) { EchoDelegate() }
        let client = try EventLoop(name: "test-client")
        let observed = Shared(Observed())
        let connection = try await connectStarted(port: server.port, on: client) { CollectingDelegate(observed) }
        let bodies = [1, 2, 100, 4096, 65_536, 65_537, 200_000, 3].enumerated().map { pattern(count: $1, seed: $0) }
        await onLoop(client) {
            for body in bodies { body.withUnsafeBytes { connection.enqueueFrame(body: $0) } }
        }
        #expect(await eventually { observed.value.frames.count == bodies.count })
        #expect(observed.value.frames == bodies)
        let keepAlive = await onLoop(client) { () -> IOError? in
            do { try connection.setKeepAlive(true) } catch { return error as? IOError }
            return nil
        }
        #expect(keepAlive == nil)
        await onLoop(client) { connection.close() }
        #expect(observed.value.closed == 1)
        let afterClose = await onLoop(client) { () -> IOError? in
            do { try connection.setKeepAlive(true) } catch { return error as? IOError }
            return nil
        }
        #expect(afterClose?.function == "setsockopt(SO_KEEPALIVE)")
        await client.shutdownGracefully()
        await server.shutdown()
    }

    @Test("thousands of small frames queued in one iteration leave in a handful of sendmsg calls")
    func writeBatching() async throws {
        let server = try TestServer { EchoDelegate() }
        let client = try EventLoop(name: "test-client")
        let observed = Shared(Observed())
        let connection = try await connectStarted(port: server.port, on: client) { CollectingDelegate(observed) }
        let before = await onLoop(client) { client.statistics.writes }
        let count = 5000
        await onLoop(client) {
            for index in 0..<count {
                pattern(count: 10, seed: index).withUnsafeBytes { connection.enqueueFrame(body: $0) }
            }
        }
        #expect(await eventually { observed.value.frames.count == count })
        #expect(observed.value.frames == (0..<count).map { pattern(count: 10, seed: $0) })
        let writes = await onLoop(client) { client.statistics.writes } - before
        // 5000 frames, 70 kB: one call unless the socket buffer fills, then a few more.
        #expect(writes <= 20)
        await client.shutdownGracefully()
        await server.shutdown()
    }

    @Test("one shared payload queued on many frames (more than IOV_MAX buffers) arrives intact")
    func sharedPayloadFanOut() async throws {
        let server = try TestServer { EchoDelegate() }
        let client = try EventLoop(name: "test-client")
        let observed = Shared(Observed())
        let connection = try await connectStarted(port: server.port, on: client) { CollectingDelegate(observed) }
        let payload = SharedBytes(pattern(count: 300, seed: 1))
        let count = 2000
        await onLoop(client) {
            for index in 0..<count {
                let prefix: [UInt8] = [UInt8(index & 0xFF), UInt8(index >> 8)]
                prefix.withUnsafeBytes { prefix in
                    [UInt8(0xEE)].withUnsafeBytes { suffix in
                        connection.enqueueFrame(prefix: prefix, payload: payload, suffix: suffix)
                    }
                }
            }
        }
        #expect(await eventually { observed.value.frames.count == count })
        let expected = (0..<count).map { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] + payload.bytes + [0xEE] }
        #expect(observed.value.frames == expected)
        await client.shutdownGracefully()
        await server.shutdown()
    }

    @Test("a peer that never reads drives queued bytes past the high watermark, and draining restores writability")
    func highWatermark() async throws {
        let flood = Shared(FloodState())
        let options = ConnectionOptions(highWatermark: 1 << 20, lowWatermark: 256 << 10)
        let group = try EventLoopGroup(threads: 1, namePrefix: "test-srv")
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { connection in
            let delegate = FloodDelegate(state: flood, frameLimit: 1024)
            connection.start(delegate: delegate, options: options)
            delegate.pump(connection)
        }
        let client = try EventLoop(name: "test-client")
        // Connected but not started: nothing reads from this socket.
        let connection = try await Connection.connect(host: "localhost", port: listener.port, on: client)
        #expect(await eventually { flood.value.changes == [false] || flood.value.stopped })
        let atFalse = flood.value
        #expect(atFalse.changes == [false])
        #expect(atFalse.queuedAtChange > options.highWatermark)
        #expect(atFalse.maxQueued <= options.highWatermark + 2 * (65_536 + 4))
        // Now read everything.
        let received = Shared(0)
        await onLoop(client) { connection.start(delegate: CountingDelegate(received)) }
        #expect(await eventually { flood.value.changes == [false, true] })
        #expect(await eventually { flood.value.stopped && received.value == flood.value.sentFrames })
        #expect(flood.value.sentFrames < 1024)
        await client.shutdownGracefully()
        listener.close()
        await group.shutdownGracefully()
    }
}
