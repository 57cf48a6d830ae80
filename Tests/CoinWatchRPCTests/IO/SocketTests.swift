import CoinWatchRPC
import CoinWatchTestSupport
import Testing

@Suite("Sockets")
struct SocketTests {
    @Test("200 connections at once each get their echoes")
    func manyConnections() async throws {
        let serverClosed = Shared(0)
        let server = try TestServer(threads: 2) { EchoDelegate(closed: serverClosed) }
        let clients = try EventLoopGroup(threads: 2, namePrefix: "test-cli")
        let count = 200
        let observed = (0..<count).map { _ in Shared(Observed()) }
        let connections = try await withThrowingTaskGroup(of: Connection.self) { group in
            for index in 0..<count {
                let loop = clients.next()
                let record = observed[index]
                group.addTask {
                    let connection = try await connectStarted(port: server.port, on: loop) {
                        CollectingDelegate(record)
                    }
                    await onLoop(loop) {
                        for frame in 0..<5 {
                            let body = pattern(count: 20, seed: index * 10 + frame)
                            body.withUnsafeBytes { connection.enqueueFrame(body: $0) }
                        }
                    }
                    return connection
                }
            }
            var all: [Connection] = []
            for try await connection in group { all.append(connection) }
            return all
        }
        #expect(connections.count == count)
        #expect(await eventually { observed.allSatisfy { $0.value.frames.count == 5 } })
        for index in 0..<count {
            #expect(observed[index].value.frames == (0..<5).map { pattern(count: 20, seed: index * 10 + $0) })
        }
        for connection in connections {
            connection.eventLoop.execute { connection.close() }
        }
        #expect(await eventually { serverClosed.value == count })
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("connecting to a closed port fails with ECONNREFUSED; a bad port is rejected")
    func connectFailures() async throws {
        let client = try EventLoop(name: "test-client")
        // A port held bound and not listening: a port found free and released could be taken meanwhile by a test
        // running beside this one, and the connection would succeed.
        let closed = try RefusingLoopbackPort()
        let port = closed.port
        let refused = await #expect(throws: IOError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: port, on: client)
        }
        withExtendedLifetime(closed) {}
        #expect(refused?.function == "connect")
        #expect(refused?.errno == 111)  // ECONNREFUSED
        #expect(refused?.description.contains("127.0.0.1:\(port)") == true)
        let badPort = await #expect(throws: IOError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: 70_000, on: client)
        }
        #expect(badPort?.description.contains("outside 0...65535") == true)
        await client.shutdownGracefully()
    }

    @Test("an IPv6 loopback listener and client work when the host has IPv6")
    func ipv6Loopback() async throws {
        let group = try EventLoopGroup(threads: 1, namePrefix: "test-srv")
        defer { group.syncShutdownGracefully() }
        let listener: ListeningSocket
        do {
            listener = try ListeningSocket(host: "::1", port: 0, group: group) { $0.start(delegate: EchoDelegate()) }
        } catch {
            // No IPv6 on this host: nothing to test.
            return
        }
        #expect(listener.localAddress.hasPrefix("[::1]:"))
        let client = try EventLoop(name: "test-client")
        let observed = Shared(Observed())
        let connection = try await connectStarted(host: "::1", port: listener.port, on: client) {
            CollectingDelegate(observed)
        }
        await onLoop(client) { [UInt8(5), 6].withUnsafeBytes { connection.enqueueFrame(body: $0) } }
        #expect(await eventually { observed.value.frames == [[5, 6]] })
        listener.close()
        await client.shutdownGracefully()
    }

    @Test("binding a port already in use fails with EADDRINUSE naming the address")
    func addressInUse() async throws {
        let group = try EventLoopGroup(threads: 1, namePrefix: "test-srv")
        let first = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { $0.close() }
        #expect(first.port > 0)
        #expect(first.localAddress == "127.0.0.1:\(first.port)")
        let error = #expect(throws: IOError.self) {
            _ = try ListeningSocket(host: "127.0.0.1", port: first.port, group: group) { $0.close() }
        }
        #expect(error?.function == "bind")
        #expect(error?.errno == 98)  // EADDRINUSE
        #expect(error?.description.contains("127.0.0.1:\(first.port)") == true)
        first.close()
        await group.shutdownGracefully()
    }
}
