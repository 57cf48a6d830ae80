import CoinWatchRPC
import CoinWatchTLS
import CoinWatchTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// TLS on the project's connections, on real event loops over loopback.
@Suite("TLS on event-loop connections")
struct TLSConnectionTests {
    let pki: TestCertificates

    init() async throws {
        pki = try await TestCertificates.shared()
    }

    /// A server that starts in frame mode, recognises the TLS handshake in the first bytes and starts TLS
    /// there (as the RPC server does), then echoes frames — or bytes, with `bytes`.
    func echoServer(bytes: Bool, record: Record, configure: (inout TLSConfiguration) -> Void = { _ in }) throws
        -> LoopbackServer
    {
        let context = try pki.serverContext(protocols: ["coinwatch"], configure: configure)
        return try LoopbackServer {
            RecordingDelegate(record, echo: true, bytesAfterHandshake: bytes, serverContext: context)
        }
    }

    /// A server that puts TLS on every accepted connection before it starts (a TLS-only endpoint), in byte
    /// mode, echoing.
    func tlsOnlyServer(record: Record, handshakeTimeout: Duration = .seconds(60)) throws -> LoopbackServer {
        let context = try pki.serverContext()
        return try LoopbackServer(
            bytes: true, transform: { TLSTransform(session: try context.makeSession()) },
            handshakeTimeout: handshakeTimeout
        ) { RecordingDelegate(record, echo: true) }
    }

    @Test("raw bytes both ways: written before the handshake, a megabyte in both directions, ALPN and close_notify")
    func rawBytes() async throws {
        let serverRecord = Record()
        let server = try echoServer(bytes: true, record: serverRecord)
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        let context = try pki.clientContext(protocols: ["coinwatch"])
        let record = Record()
        let payload = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) }
        let connection = try await context.connectPatiently(
            host: "127.0.0.1", port: server.port, on: loop, serverName: "localhost"
        ) { connection in
            connection.start(streamDelegate: RecordingDelegate(record))
            // Queued before the handshake: held in plain until it is done.
            connection.enqueue(Array("hello".utf8))
        }
        #expect(await record.wait { $0.bytes == Array("hello".utf8) })
        #expect(record.value.established == ["coinwatch"])
        #expect(serverRecord.value.established == ["coinwatch"])

        await onLoop(loop) { connection.enqueue(payload) }
        #expect(await record.wait { $0.bytes.count >= 5 + payload.count })
        #expect(record.value.bytes.elementsEqual(Array("hello".utf8) + payload), "the echoed bytes differ")

        // An orderly close: close_notify, then FIN; neither side reports an error.
        await onLoop(loop) { connection.close(afterFlush: .seconds(10)) }
        #expect(await record.wait { $0.closed == 1 })
        #expect(await serverRecord.wait { $0.closed == 1 })
        #expect(record.value.closeError == nil)
        #expect(serverRecord.value.closeError == nil)
        #expect(serverRecord.value.inputEnded == 1)
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("frames held while input is paused come before a close_notify read behind them, one by one as it resumes")
    func heldFramesBeforeCloseNotify() async throws {
        let serverRecord = Record()
        let context = try pki.serverContext(protocols: ["coinwatch"])
        let server = try LoopbackServer {
            RecordingDelegate(serverRecord, serverContext: context, pauseAfterHandshake: true, pauseAfterEachFrame: true)
        }
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        let record = Record()
        let bodies = (1...10).map { [UInt8](repeating: UInt8($0), count: 100 * $0) }
        let connection = try await pki.clientContext(protocols: ["coinwatch"]).connectPatiently(port: server.port, on: loop) {
            $0.start(delegate: RecordingDelegate(record))
        }
        #expect(await serverRecord.wait { $0.connection != nil })
        // Ten frames and the close_notify, all waiting in the server's socket while it reads nothing.
        await onLoop(loop) {
            for body in bodies { body.withUnsafeBytes { connection.enqueueFrame(body: $0) } }
            connection.close(afterFlush: .seconds(60))
        }
        let serverConnection = try #require(serverRecord.value.connection)
        // One read takes them all: each resume delivers one frame, the rest stay held, then the end.
        for expected in 1...10 {
            await onLoop(serverConnection.eventLoop) { serverConnection.resumeInput() }
            #expect(await serverRecord.wait { $0.frames.count >= expected }, "frame \(expected)")
        }
        // Once more, reading on: the close_notify was in that first read (then it comes after the held frames), or
        // arrives in a later one (a slow machine), which the delegate's pause after the tenth frame left unread.
        await onLoop(serverConnection.eventLoop) { serverConnection.resumeInput() }
        #expect(await serverRecord.wait { $0.inputEnded == 1 })
        #expect(serverRecord.value.frames == bodies)
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("native frames both ways over TLS, with the client certificate's subject at the server")
    func frames() async throws {
        let serverRecord = Record()
        let server = try echoServer(bytes: false, record: serverRecord) {
            $0.caFile = pki.caFile
            $0.clientCertificates = .required
        }
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        let context = try pki.clientContext(protocols: ["coinwatch"]) {
            $0.certificateChainFile = pki.client.certificateFile
            $0.privateKeyFile = pki.client.privateKeyFile
        }
        let record = Record()
        // Frame bodies of 1 byte to about 5 KB (an empty body is not a valid frame).
        let bodies = (0..<200).map { index in (0...(index * 97 % 5000)).map { UInt8(truncatingIfNeeded: $0 + index) } }
        let connection = try await context.connectPatiently(port: server.port, on: loop) { connection in
            connection.start(delegate: RecordingDelegate(record))
            for body in bodies { body.withUnsafeBytes { connection.enqueueFrame(body: $0) } }
        }
        #expect(await record.wait { $0.frames.count == bodies.count })
        #expect(record.value.frames.elementsEqual(bodies), "the echoed frames differ")
        #expect(serverRecord.value.frames.elementsEqual(bodies), "the frames received differ")
        #expect(serverRecord.value.peerIdentity == TestCertificates.clientSubject)
        await onLoop(loop) { connection.close() }
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("the client refuses a server it cannot verify; both ends close with the TLS reason")
    func verificationFailure() async throws {
        let serverRecord = Record()
        let server = try echoServer(bytes: false, record: serverRecord)
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        // The server's certificate names localhost, not this.
        let record = Record()
        try await pki.clientContext().connectPatiently(
            host: "127.0.0.1", port: server.port, on: loop, serverName: "elsewhere.example"
        ) { $0.start(delegate: RecordingDelegate(record)) }
        #expect(await record.wait { $0.closed == 1 })
        let error = try #require(record.value.closeError)
        #expect(error.isTransformFailure)
        #expect(error.function == "TLS handshake")
        #expect(error.detail?.contains("hostname mismatch") == true)
        #expect(record.value.established.isEmpty)
        #expect(await serverRecord.wait { $0.closed == 1 })
        #expect(serverRecord.value.closeError?.isTransformFailure == true)
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("plaintext sent to a TLS endpoint is closed cleanly with the reason, never echoed")
    func plaintextToTLS() async throws {
        let serverRecord = Record()
        let server = try tlsOnlyServer(record: serverRecord)
        let socket = try RawSocket(port: server.port)
        socket.send(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        // Nothing comes back (OpenSSL sends no alert to a peer that is not speaking TLS at all), then end of
        // file; the server closes once this side has closed too.
        #expect(try await socket.readToEnd().isEmpty)
        socket.close()
        #expect(await serverRecord.wait { $0.closed == 1 })
        #expect(serverRecord.value.closeError?.isTransformFailure == true)
        #expect(serverRecord.value.closeError?.detail?.contains("http request") == true)
        #expect(serverRecord.value.bytes.isEmpty)
        await server.shutdown()
    }

    @Test("garbage after a ClientHello gets an alert and a clean close")
    func garbageAfterClientHello() async throws {
        let serverRecord = Record()
        let server = try tlsOnlyServer(record: serverRecord)
        let client = try pki.clientContext().makeSession(serverName: "localhost")
        try client.advanceHandshake()
        let socket = try RawSocket(port: server.port)
        socket.send(client.takeOutput())
        socket.send([UInt8](repeating: 0xA5, count: 64))
        let answer = try await socket.readToEnd()
        socket.close()
        // The server's first flight, then its alert; then end of file.
        try client.feed(answer)
        let refused = try #require(failure { _ = try client.readAvailable() })
        #expect(refused.openSSLErrors.joined().contains("alert"))
        #expect(await serverRecord.wait { $0.closed == 1 })
        #expect(serverRecord.value.closeError?.isTransformFailure == true)
        #expect(serverRecord.value.closeError?.detail?.contains("protocolError") == true)
        await server.shutdown()
    }

    @Test("TLS sent to a plaintext endpoint fails the client's handshake cleanly")
    func tlsToPlaintext() async throws {
        let serverRecord = Record()
        let server = try LoopbackServer(bytes: true) { RecordingDelegate(serverRecord, echo: true) }
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        let record = Record()
        try await pki.clientContext().connectPatiently(port: server.port, on: loop) {
            $0.start(streamDelegate: RecordingDelegate(record))
        }
        // The plaintext server echoes the ClientHello, which is not a ServerHello.
        #expect(await record.wait { $0.closed == 1 })
        #expect(record.value.closeError?.isTransformFailure == true)
        #expect(record.value.bytes.isEmpty)
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    @Test("a handshake that stalls is closed when its timeout passes, with ETIMEDOUT")
    func stalledHandshake() async throws {
        let serverRecord = Record()
        let server = try tlsOnlyServer(record: serverRecord, handshakeTimeout: .milliseconds(300))
        let socket = try RawSocket(port: server.port)
        // The first five bytes of a ClientHello record, then nothing.
        socket.send([0x16, 0x03, 0x01, 0x02, 0x00])
        #expect(await serverRecord.wait { $0.closed == 1 })
        let error = try #require(serverRecord.value.closeError)
        #expect(error.isTimeout)
        #expect(error.function == "TLS handshake")
        #expect(try await socket.readToEnd().isEmpty)
        await server.shutdown()
    }

    @Test("a peer that ends the connection mid-handshake is reported as such")
    func endOfFileMidHandshake() async throws {
        let serverRecord = Record()
        let server = try tlsOnlyServer(record: serverRecord)
        let socket = try RawSocket(port: server.port)
        socket.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        socket.close()
        #expect(await serverRecord.wait { $0.closed == 1 })
        #expect(serverRecord.value.closeError?.isTransformFailure == true)
        #expect(serverRecord.value.inputEnded == 0)
        await server.shutdown()
    }

    @Test("a peer that stops reading holds the sender back: plain bytes queue to the watermark, not beyond")
    func backpressure() async throws {
        let serverRecord = Record()
        let serverContext = try pki.serverContext()
        let server = try LoopbackServer {
            RecordingDelegate(serverRecord, bytesAfterHandshake: true, serverContext: serverContext, pauseAfterHandshake: true)
        }
        let clients = try EventLoopGroup(threads: 1, namePrefix: "tls-test-cli")
        let loop = clients.next()
        let record = Record()
        let high = 256 * 1024
        let options = ConnectionOptions(highWatermark: high, lowWatermark: 64 * 1024)
        let connection = try await pki.clientContext().connectPatiently(port: server.port, on: loop) {
            $0.start(streamDelegate: RecordingDelegate(record), options: options)
        }
        #expect(await record.wait { !$0.established.isEmpty })

        // Queue while writable; the server reads nothing, so the kernel's buffers fill and then the queue.
        let chunk = [UInt8](repeating: 7, count: 64 * 1024)
        var queuedMost = 0
        var sent = 0
        var stopped = false
        for _ in 0..<400 where !stopped {
            let (queued, writable): (Int, Bool) = await withCheckedContinuation { continuation in
                _ = loop.execute {
                    let writable = connection.isWritable
                    if writable { connection.enqueue(chunk) }
                    continuation.resume(returning: (connection.queuedBytes, writable))
                }
            }
            if writable { sent += chunk.count } else { stopped = true }
            queuedMost = max(queuedMost, queued)
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(stopped, "the connection never stopped being writable")
        // Plain bytes up to the high watermark plus the chunk that crossed it, and at most one encoded batch.
        #expect(queuedMost <= high + chunk.count + 64 * 1024 + 4 * 1024)

        // The server reads again: everything arrives, in order.
        let serverConnection = try #require(serverRecord.value.connection)
        _ = serverConnection.eventLoop.execute { serverConnection.resumeInput() }
        #expect(await serverRecord.wait { $0.bytes.count == sent })
        #expect(serverRecord.value.bytes.allSatisfy { $0 == 7 })
        await onLoop(loop) { connection.close() }
        await clients.shutdownGracefully()
        await server.shutdown()
    }
}

/// A blocking loopback client for bytes that are not TLS (or not all of it). `@unchecked Sendable`: the test
/// uses it from one place at a time, and its waits run on a thread of their own.
final class RawSocket: @unchecked Sendable {
    private let socket: LoopbackSocket

    init(port: Int) throws {
        socket = try LoopbackSocket.connect(port: port)
    }

    func send(_ bytes: [UInt8]) {
        try? socket.send(bytes)
    }

    /// Sends FIN.
    func close() {
        shutdown(socket.fd, Int32(SHUT_WR))
    }

    /// Everything until end of file (bounded by 60 s without data), read on a thread of its own.
    func readToEnd() async throws -> [UInt8] {
        try await onOwnThread { [self] in
            var bytes = [UInt8]()
            while let chunk = try? socket.receive(timeout: .seconds(60)), !chunk.isEmpty { bytes += chunk }
            return bytes
        }
    }
}
