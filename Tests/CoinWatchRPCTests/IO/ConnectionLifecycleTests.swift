import CoinWatchTestSupport
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

@Suite("Connection lifecycle")
struct ConnectionLifecycleTests {
    @Test("the peer closing is reported once, on either side")
    func peerCloseReportedOnce() async throws {
        let serverSide = Shared(Observed())
        let server = try TestServer { CollectingDelegate(serverSide) }
        let client = try EventLoop(name: "test-client")
        // 1. The client closes: the server sees end of file, then one close without error.
        let first = try await connectStarted(port: server.port, on: client) { EchoDelegate() }
        await onLoop(client) { first.close() }
        #expect(await eventually { serverSide.value.closed == 1 })
        // 2. The server closes: the client sees end of file once, then one close.
        let clientSide = Shared(Observed())
        let closer = try TestServer { CloseOnFrameDelegate() }
        let second = try await connectStarted(port: closer.port, on: client) { CollectingDelegate(clientSide) }
        await onLoop(client) { [UInt8(1), 2, 3].withUnsafeBytes { second.enqueueFrame(body: $0) } }
        #expect(await eventually { clientSide.value.closed == 1 })
        // Give stray events a chance to show up, then check nothing was reported twice.
        for _ in 0..<20 {
            _ = await onLoop(client) { 0 }
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(serverSide.value.inputEnded == 1)
        #expect(serverSide.value.closed == 1)
        #expect(serverSide.value.closeError == nil)
        #expect(clientSide.value.inputEnded == 1)
        #expect(clientSide.value.closed == 1)
        #expect(clientSide.value.closeError == nil)
        #expect(await onLoop(client) { second.isClosed && client.registrationCount == 0 })
        await client.shutdownGracefully()
        await server.shutdown()
        await closer.shutdown()
    }

    @Test("close(afterFlush:) delivers the last frame before closing, even with unread input")
    func closeAfterFlush() async throws {
        let serverSide = Shared(Observed())
        let server = try TestServer { ReplyAndCloseDelegate(serverSide) }
        let client = try EventLoop(name: "test-client")
        let clientSide = Shared(Observed())
        let connection = try await connectStarted(port: server.port, on: client) { CollectingDelegate(clientSide) }
        await onLoop(client) {
            // The server reads these together and replies to the first only: the rest is unread input.
            for index in 0..<50 {
                pattern(count: 1000, seed: index).withUnsafeBytes { connection.enqueueFrame(body: $0) }
            }
        }
        #expect(await eventually { clientSide.value.closed == 1 && serverSide.value.closed == 1 })
        #expect(clientSide.value.frames == [Array("bye".utf8)])
        #expect(clientSide.value.closeError == nil)
        #expect(serverSide.value.closeError == nil)
        await client.shutdownGracefully()
        await server.shutdown()
    }

    @Test("an HTTP request gets a plain reply and the connection closes")
    func httpRequestDetected() async throws {
        let serverSide = Shared(Observed())
        // A close timeout no busy machine reaches, so that only the server's waiting for our end of file can close
        // the connection without an error.
        let server = try TestServer(options: ConnectionOptions(closeTimeout: .seconds(600))) { HTTPRejectingDelegate(serverSide) }
        let raw = try RawClient(port: server.port)
        raw.send(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        let reply = String(decoding: await raw.readToEnd(), as: UTF8.self)
        raw.close()
        #expect(reply.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(await eventually { serverSide.value.closed == 1 })
        #expect(serverSide.value.decodingErrors.map(\.code) == [.httpRequest])
        // The server waited for our end of file, not for its close timeout.
        #expect(serverSide.value.closeError == nil)
        await server.shutdown()
    }

    @Test("an oversized frame from the peer closes the connection with a tooLarge error")
    func oversizedFrameFromPeer() async throws {
        let serverSide = Shared(Observed())
        let options = ConnectionOptions(maxFrameBytes: 1 << 20)
        let server = try TestServer(options: options) { CollectingDelegate(serverSide) }
        let client = try EventLoop(name: "test-client")
        let clientSide = Shared(Observed())
        let connection = try await connectStarted(port: server.port, on: client) { CollectingDelegate(clientSide) }
        await onLoop(client) {
            [UInt8(9)].withUnsafeBytes { connection.enqueueFrame(body: $0) }
            // A prefix announcing 10 MiB, then a little data: rejected on the prefix alone.
            connection.enqueue([0x00, 0xA0, 0x00, 0x00, 1, 2, 3])
        }
        #expect(await eventually { clientSide.value.closed == 1 && serverSide.value.closed == 1 })
        #expect(serverSide.value.frames == [[9]])
        #expect(serverSide.value.decodingErrors.map(\.code) == [.tooLarge])
        #expect(serverSide.value.decodingErrors.first?.declaredLength == 0x00A0_0000)
        await client.shutdownGracefully()
        await server.shutdown()
    }

    @Test("close(afterFlush:) gives up after its timeout when the peer never reads")
    func closeAfterFlushTimesOut() async throws {
        let flood = Shared(FloodState())
        let closeError = Shared<IOError?>(nil)
        let group = try EventLoopGroup(threads: 1, namePrefix: "test-srv")
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { connection in
            let delegate = FloodDelegate(state: flood, frameLimit: 1024, closed: closeError)
            connection.start(delegate: delegate, options: ConnectionOptions(highWatermark: 1 << 20, lowWatermark: 0))
            delegate.pump(connection)
        }
        let client = try EventLoop(name: "test-client")
        // Connected but never started: the server's output can never drain.
        let connection = try await Connection.connect(host: "127.0.0.1", port: listener.port, on: client)
        #expect(await eventually { flood.value.stopped })
        #expect(flood.value.changes == [false])
        #expect(await eventually { closeError.value != nil })
        #expect(closeError.value?.isTimeout == true)
        #expect(closeError.value?.function == "close(afterFlush:)")
        _ = connection
        await client.shutdownGracefully()
        listener.close()
        await group.shutdownGracefully()
    }

    @Test("stopping a loop closes its connections with a shutdown error, and the peer sees end of file")
    func loopStopClosesConnections() async throws {
        let serverSide = Shared(Observed())
        let server = try TestServer { CollectingDelegate(serverSide) }
        let client = try EventLoop(name: "test-client")
        let clientSide = Shared(Observed())
        _ = try await connectStarted(port: server.port, on: client) { CollectingDelegate(clientSide) }
        // Make sure the server has accepted (listener + connection registered) before stopping it.
        let serverLoop = server.group.loops[0]
        var accepted = false
        for _ in 0..<5000 where !accepted {
            accepted = await onLoop(serverLoop) { serverLoop.registrationCount } == 2
            if !accepted { try await Task.sleep(for: .milliseconds(2)) }
        }
        #expect(accepted)
        await server.shutdown()
        #expect(serverSide.value.closed == 1)
        #expect(serverSide.value.closeError?.isShutdown == true)
        #expect(await eventually { clientSide.value.closed == 1 })
        #expect(clientSide.value.inputEnded == 1)
        await client.shutdownGracefully()
    }
}
