import CoinWatchTestSupport
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// Collects raw input and echoes it back, for connections in byte-stream mode.
final class ByteEchoDelegate: ByteStreamDelegate {
    let received: Shared<[UInt8]>
    let closed: Shared<Int>
    let echo: Bool

    init(received: Shared<[UInt8]>, closed: Shared<Int> = Shared(0), echo: Bool = true) {
        self.received = received
        self.closed = closed
        self.echo = echo
    }

    func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        #expect(!bytes.isEmpty)
        received.update { $0 += bytes }
        if echo { connection.enqueue(bytes) }
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        closed.update { $0 += 1 }
    }
}

/// Frame mode until the input turns out to be something else (the decoder's error) or a frame saying
/// "switch" arrives; then byte-stream mode with a `ByteEchoDelegate`.
final class SniffingDelegate: ConnectionDelegate {
    let errors: Shared<[FrameError.Code]>
    let frames: Shared<[[UInt8]]>
    let next: ByteEchoDelegate

    init(errors: Shared<[FrameError.Code]>, frames: Shared<[[UInt8]]>, next: ByteEchoDelegate) {
        self.errors = errors
        self.frames = frames
        self.next = next
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        frames.update { $0.append(Array(body)) }
        if Array(body) == Array("switch".utf8) { connection.switchToByteStream(next) }
    }

    func frameDecodingFailed(_ error: FrameError, on connection: Connection) {
        errors.update { $0.append(error.code) }
        if error.code == .httpRequest || error.code == .tlsHandshake { connection.switchToByteStream(next) }
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        Issue.record("the frame delegate must not hear about a connection it handed over")
    }
}

@Suite("Connection byte-stream mode")
struct ConnectionByteStreamTests {
    struct Sniffer {
        let errors = Shared<[FrameError.Code]>([])
        let frames = Shared<[[UInt8]]>([])
        let received = Shared<[UInt8]>([])
        let closed = Shared(0)
        let server: TestServer

        init() throws {
            let (errors, frames, received, closed) = (self.errors, self.frames, self.received, self.closed)
            server = try TestServer {
                SniffingDelegate(errors: errors, frames: frames, next: ByteEchoDelegate(received: received, closed: closed))
            }
        }
    }

    @Test("an HTTP request on a frame-mode connection is handed over whole, even when its first bytes came alone")
    func sniffedHTTP() async throws {
        let sniffer = try Sniffer()
        let request = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let client = try RawClient(port: sniffer.server.port)
        // Two bytes first: the decoder holds them as part of a length prefix, and the hand-over must still
        // replay them ahead of the rest.
        client.send(Array(request[..<2]))
        client.send(Array(request[2...]))
        var echoed: [UInt8] = []
        while echoed.count < request.count {
            let chunk = await client.readSome()
            if chunk.isEmpty { break }
            echoed += chunk
        }
        #expect(echoed == request)
        #expect(sniffer.received.value == request)
        #expect(sniffer.errors.value == [.httpRequest])
        client.close()
        #expect(await eventually { sniffer.closed.value == 1 })
        await sniffer.server.shutdown()
    }

    @Test("a TLS handshake record on a plaintext frame-mode connection is recognised and can be handed over")
    func sniffedTLS() async throws {
        let sniffer = try Sniffer()
        // A ClientHello's record header (type 22, version 3.1, length 0x00c8) and the start of its body.
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xC8, 0x01, 0x00, 0x00, 0xC4, 0x03, 0x03]
        let client = try RawClient(port: sniffer.server.port)
        client.send(hello)
        #expect(await client.readSome() == hello)
        #expect(sniffer.errors.value == [.tlsHandshake])
        client.close()
        await sniffer.server.shutdown()
    }

    @Test("a frame may switch the connection to bytes: what follows it in the same read goes to the new delegate")
    func switchAfterFrame() async throws {
        let sniffer = try Sniffer()
        let client = try RawClient(port: sniffer.server.port)
        let tail = Array("raw bytes after the frame".utf8)
        client.send(FrameEncoder.header(bodyLength: 4) + Array("ping".utf8)
            + FrameEncoder.header(bodyLength: 6) + Array("switch".utf8) + tail)
        var echoed: [UInt8] = []
        while echoed.count < tail.count {
            let chunk = await client.readSome()
            if chunk.isEmpty { break }
            echoed += chunk
        }
        #expect(echoed == tail)
        #expect(sniffer.frames.value == [Array("ping".utf8), Array("switch".utf8)])
        #expect(sniffer.errors.value.isEmpty)
        client.close()
        await sniffer.server.shutdown()
    }

    @Test("a connection started in byte-stream mode delivers reads as they are and reports its close")
    func startedInByteMode() async throws {
        let serverReceived = Shared<[UInt8]>([])
        let group = try EventLoopGroup(threads: 1, namePrefix: "test-srv")
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.start(streamDelegate: ByteEchoDelegate(received: serverReceived))
        }
        let loop = try EventLoop(name: "test-client")
        let connection = try await Connection.connect(host: "127.0.0.1", port: listener.port, on: loop, timeout: .seconds(60))
        let clientReceived = Shared<[UInt8]>([])
        let clientClosed = Shared(0)
        let message = pattern(count: 200_000, seed: 7)
        await onLoop(loop) {
            connection.start(streamDelegate: ByteEchoDelegate(received: clientReceived, closed: clientClosed, echo: false))
            connection.enqueue(message)
        }
        #expect(await eventually { clientReceived.value.count == message.count })
        #expect(clientReceived.value == message)
        #expect(serverReceived.value == message)
        listener.close()
        await group.shutdownGracefully()
        #expect(await eventually { clientClosed.value == 1 })
        await loop.shutdownGracefully()
    }
}
