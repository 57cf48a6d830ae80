import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchHTTP
@testable import CoinWatchRPC

/// The Connect protocol, the CORS preflight and the dashboard over HTTP/1.1 on the RPC port, end to end over
/// loopback: chunked streams in pipeline order, cancellation when the client goes away, a stream ended by a
/// graceful shutdown, CORS headers for allowed origins only.
@Suite(.timeLimit(.minutes(2)))
struct ConnectOverHTTP1Tests {
    typealias Running = HTTPServerTests.Running

    final class Terminations: Sendable {
        let codes = Mutex<[RPCError.Code]>([])
    }

    /// Health/Check, and a StreamPrices that sends one update per requested symbol and stays open.
    static func methods(_ terminations: Terminations) -> [RPCMethod] {
        [
            Running.healthCheck,
            .serverStream(V1.CoinWatch.streamPrices, onLoop: { request, stream throws(RPCError) in
                for (index, symbol) in request.symbols.enumerated() {
                    stream.send(V1.PriceUpdate(symbol: symbol, price: V1.Decimal(mantissa: 5, scale: 1), sequence: UInt64(index + 1)))
                }
                stream.onTerminate { error in terminations.codes.withLock { $0.append(error.code) } }
            }),
        ]
    }

    static func envelope(_ json: String, flags: UInt8 = 0) -> [UInt8] {
        let bytes = Array(json.utf8)
        let count = UInt32(bytes.count)
        return [flags, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + bytes
    }

    static func streamRequest(_ body: [UInt8], extra: String = "") -> [UInt8] {
        Array(("POST /coinwatch.v1.CoinWatch/StreamPrices HTTP/1.1\r\nHost: t\r\nContent-Type: application/connect+json\r\n"
               + extra + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
    }

    /// Reads from `client` after `buffer` until `done` holds (or the peer closes, or a read times out).
    static func read(_ client: RawClient, after buffer: [UInt8] = [], until done: ([UInt8]) -> Bool) async -> [UInt8] {
        var buffer = buffer
        while !done(buffer) {
            let more = await client.readSome()
            if more.isEmpty { break }
            buffer += more
        }
        return buffer
    }

    /// `count` complete responses.
    static func responses(_ count: Int, from client: RawClient, heads: Set<Int> = []) async -> [HTTPServerTests.Response] {
        await HTTPServerTests.read(count, from: client, heads: heads)
    }

    /// Whether the server closed the connection (nothing more to read).
    static func isClosed(_ client: RawClient) async -> Bool {
        await client.readSome().isEmpty
    }

    /// A chunked response at the start of `bytes`: its head, its decoded body, and how many bytes it took;
    /// nil until the last chunk has arrived.
    static func chunked(_ bytes: [UInt8]) -> (head: String, body: [UInt8], used: Int)? {
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0..<($0 + 4)] == [13, 10, 13, 10] }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var position = end + 4
        var body: [UInt8] = []
        while true {
            guard let lineEnd = bytes[position...].indices.dropLast().first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[position..<lineEnd], as: UTF8.self), radix: 16)
            else { return nil }
            let start = lineEnd + 2
            guard bytes.count >= start + size + 2 else { return nil }
            body += bytes[start..<(start + size)]
            position = start + size + 2
            if size == 0 { return (head, body, position) }
        }
    }

    /// The (flags, JSON text) envelopes of a Connect stream body.
    static func envelopes(_ body: [UInt8]) -> [(UInt8, String)] {
        var out: [(UInt8, String)] = []
        var position = 0
        while body.count - position >= 5 {
            let length = Int(body[position + 1]) << 24 | Int(body[position + 2]) << 16 | Int(body[position + 3]) << 8 | Int(body[position + 4])
            guard body.count - position - 5 >= length else { break }
            out.append((body[position], String(decoding: body[(position + 5)..<(position + 5 + length)], as: UTF8.self)))
            position += 5 + length
        }
        return out
    }

    @Test("a Connect stream is chunked, and a request pipelined behind it is answered after it, in order")
    func chunkedStreamThenPipelined() async throws {
        let terminations = Terminations()
        let running = try Running(methods: Self.methods(terminations))
        let client = try RawClient(port: running.server.port)
        client.send(Self.streamRequest(Self.envelope(#"{"symbols":["BTC","ETH"]}"#), extra: "Connect-Timeout-Ms: 300\r\n")
                    + Array(("POST /coinwatch.v1.Health/Check HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                             + "Content-Length: 2\r\n\r\n{}").utf8))
        let buffer = await Self.read(client) { bytes in
            guard let stream = Self.chunked(bytes) else { return false }
            return String(decoding: bytes[stream.used...], as: UTF8.self).contains(#"{"status":"SERVING"}"#)
        }
        let stream = try #require(Self.chunked(buffer))
        #expect(stream.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(stream.head.lowercased().contains("content-type: application/connect+json"))
        #expect(stream.head.lowercased().contains("transfer-encoding: chunked"))
        let parts = Self.envelopes(stream.body)
        #expect(parts.map(\.0) == [0, 0, 2])
        #expect(parts.first?.1.contains(#""symbol":"BTC""#) == true)
        #expect(parts.last?.1.contains(#""code":"deadline_exceeded""#) == true)
        let unary = String(decoding: buffer[stream.used...], as: UTF8.self)
        #expect(unary.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(terminations.codes.withLock { $0 } == [.deadlineExceeded])
        await running.server.shutdownNow()
    }

    @Test("a stream's request repeated behind it, its body split across reads, is answered after the stream")
    func repeatedStreamRequestSplitBody() async throws {
        let terminations = Terminations()
        // The second request stays incomplete until this test has read the first stream's update: on a busy
        // machine that may take longer than the default request timeout (which counts from its first byte).
        let running = try Running(requestTimeout: .seconds(100), methods: Self.methods(terminations))
        let client = try RawClient(port: running.server.port)
        let request = Self.streamRequest(Self.envelope(#"{"symbols":["BTC"]}"#), extra: "Connect-Timeout-Ms: 300\r\n")
        // The second request's head is the first one's (the parser recognises it whole); its body ends in a later
        // read, after the first request became a stream and the connection let its parse spares go.
        client.send(request + request.dropLast(3))
        let started = await Self.read(client) { String(decoding: $0, as: UTF8.self).contains("BTC") }
        client.send(Array(request.suffix(3)))
        let buffer = await Self.read(client, after: started) { bytes in
            guard let first = Self.chunked(bytes) else { return false }
            return Self.chunked(Array(bytes[first.used...])) != nil
        }
        let first = try #require(Self.chunked(buffer))
        let second = try #require(Self.chunked(Array(buffer[first.used...])))
        for stream in [first, second] {
            #expect(stream.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            let parts = Self.envelopes(stream.body)
            #expect(parts.map(\.0) == [0, 2])
            #expect(parts.first?.1.contains(#""symbol":"BTC""#) == true)
            #expect(parts.last?.1.contains(#""code":"deadline_exceeded""#) == true)
        }
        #expect(terminations.codes.withLock { $0 } == [.deadlineExceeded, .deadlineExceeded])
        await running.server.shutdownNow()
    }

    /// A server with the stream method, and a client whose BTC stream has sent its first message (read so far).
    static func runningStream(_ terminations: Terminations) async throws -> (Running, RawClient, [UInt8]) {
        let running = try Running(methods: methods(terminations))
        let client = try RawClient(port: running.server.port)
        client.send(streamRequest(envelope(#"{"symbols":["BTC"]}"#)))
        let started = await read(client) { String(decoding: $0, as: UTF8.self).contains("BTC") }
        #expect(String(decoding: started, as: UTF8.self).contains("BTC"))
        return (running, client, started)
    }

    @Test("a client that goes away cancels its running Connect stream")
    func disconnectCancels() async throws {
        let terminations = Terminations()
        let (running, client, _) = try await Self.runningStream(terminations)
        client.close()
        #expect(await eventually { terminations.codes.withLock { $0 } == [.cancelled] })
        await running.server.shutdownNow()
    }

    @Test("a graceful shutdown ends a Connect stream with unavailable, then closes the connection")
    func drainEndsStream() async throws {
        let (running, client, started) = try await Self.runningStream(Terminations())
        async let shutdown: Void = running.server.shutdownGracefully()
        let buffer = await Self.read(client, after: started) { Self.chunked($0) != nil }
        let stream = try #require(Self.chunked(buffer))
        #expect(Self.envelopes(stream.body).last?.1.contains(#""code":"unavailable""#) == true)
        #expect(try await Self.isClosed(client), "the connection closes after the stream's end")
        await shutdown
    }

    @Test("Expect: 100-continue gets 100 Continue before the body is sent, then the answer")
    func expectContinue() async throws {
        // The body is sent by this test after it reads the interim answer: on a busy machine that may take longer
        // than the default request timeout (which counts from the request's first byte).
        let running = try Running(requestTimeout: .seconds(100))
        let client = try RawClient(port: running.server.port)
        client.send("POST /coinwatch.v1.Health/Check HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                        + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        let interim = await Self.read(client) { String(decoding: $0, as: UTF8.self).hasSuffix("\r\n\r\n") }
        #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        client.send("{}")
        let answer = await Self.responses(1, from: client)
        #expect(answer.map(\.status) == [200])
        #expect(answer.first?.body == #"{"status":"SERVING"}"#)
        await running.server.shutdownNow()
    }

    @Test("requests on one connection whose heads differ only a little are each answered as their own head asks")
    func headsThatDiffer() async throws {
        let running = try Running()
        let client = try RawClient(port: running.server.port)
        let head = "POST /coinwatch.v1.Health/Check HTTP/1.1\r\nHost: t\r\n"
        client.send(head + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                        + head + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                        + head + "Content-Type: application/proto\r\nContent-Length: 0\r\n\r\n"
                        + head + "Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{not json}"
                        + head + "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        let responses = await Self.responses(5, from: client)
        #expect(responses.map(\.status) == [200, 200, 200, 400, 200])
        #expect(responses.map { $0.headers["content-type"] }
                == ["application/json", "application/json", "application/proto", "application/json", "application/json"])
        #expect(responses[0].body == #"{"status":"SERVING"}"#)
        #expect(responses[2].body == "\u{8}\u{1}")
        #expect(responses.map { $0.headers["connection"] } == [nil, nil, nil, nil, "close"])
        #expect(try await Self.isClosed(client))
        await running.server.shutdownNow()
    }

    @Test("CORS: an allowed origin's preflight and calls carry its allowance; another origin gets none")
    func cors() async throws {
        let running = try Running(corsOrigins: ["https://allowed.example"])
        let client = try RawClient(port: running.server.port)
        let path = "/coinwatch.v1.Health/Check"
        client.send("OPTIONS \(path) HTTP/1.1\r\nHost: t\r\nOrigin: https://allowed.example\r\nAccess-Control-Request-Method: POST\r\n\r\n"
                    + "OPTIONS \(path) HTTP/1.1\r\nHost: t\r\nOrigin: https://other.example\r\nAccess-Control-Request-Method: POST\r\n\r\n"
                    + "POST \(path) HTTP/1.1\r\nHost: t\r\nOrigin: https://allowed.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                    + "POST \(path) HTTP/1.1\r\nHost: t\r\nOrigin: https://other.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        let responses = await Self.responses(4, from: client)
        #expect(responses.map(\.status) == [204, 403, 200, 200])
        #expect(responses[0].headers["access-control-allow-origin"] == "https://allowed.example")
        #expect(responses[0].headers["access-control-allow-methods"] == "POST, GET")
        #expect(responses[1].headers["access-control-allow-origin"] == nil)
        #expect(responses[2].headers["access-control-allow-origin"] == "https://allowed.example")
        #expect(responses[3].headers["access-control-allow-origin"] == nil)
        await running.server.shutdownNow()
    }

    @Test("the dashboard is served at / with its ETag; HEAD and a matching If-None-Match carry no body")
    func dashboard() async throws {
        let running = try Running()
        let client = try RawClient(port: running.server.port)
        client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        let page = try #require(try await Self.responses(1, from: client).first)
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.headers["content-security-policy"] != nil)
        let etag = try #require(page.headers["etag"])
        client.send("GET /index.html HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(etag)\r\n\r\nHEAD / HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let more = await Self.responses(3, from: client, heads: [0, 1])
        #expect(more.map(\.status) == [304, 200, 405])
        #expect(more[1].headers["content-length"] == String(page.body.utf8.count))
        await running.server.shutdownNow()
    }
}
