import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchHTTP
@testable import CoinWatchRPC

/// The Connect protocol over HTTP/2 (prior knowledge) on the RPC port, with frames made by hand: a unary JSON
/// answer in DATA ending the stream, a stream's envelopes ending with the end-of-stream message, and a stream
/// the client resets cancelled.
@Suite(.timeLimit(.minutes(2)))
struct ConnectOverHTTP2Tests {
    typealias HTTP1 = ConnectOverHTTP1Tests
    typealias Frames = HTTP2RawFrames

    /// A POST on stream `id` with `body` (HEADERS, then DATA ending the stream).
    static func post(_ id: UInt32, _ path: String, _ contentType: String, _ body: [UInt8], extra: [(String, String)] = []) -> [UInt8] {
        Frames.frame(Frames.FrameType.headers, flags: Frames.Flag.endHeaders, stream: id,
                     Frames.headerBlock([(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "t"),
                                         ("content-type", contentType)] + extra))
            + Frames.frame(Frames.FrameType.data, flags: Frames.Flag.endStream, stream: id, body)
    }

    /// The server's whole frames so far: (type, flags, stream, payload).
    static func frames(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] {
        var out: [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] = []
        var splitter = HTTP2FrameSplitter()
        bytes.withUnsafeBytes { whole in
            try? splitter.feed(whole) { header, payload in out.append((header.type, header.flags, header.stream, Array(payload))) }
        }
        return out
    }

    /// The DATA bytes of `stream`, and whether its last DATA frame ended it.
    static func body(of stream: UInt32, in bytes: [UInt8]) -> (body: [UInt8], ended: Bool) {
        let data = frames(bytes).filter { $0.type == 0 && $0.stream == stream }
        return (data.flatMap(\.payload), data.last.map { $0.flags & 0x1 != 0 } ?? false)
    }

    /// A server with the stream method, and an HTTP/2 client that has sent the preface, SETTINGS and `requests`.
    static func connected(_ terminations: HTTP1.Terminations, sending requests: [UInt8]) throws -> (HTTP1.Running, RawClient) {
        let running = try HTTP1.Running(methods: HTTP1.methods(terminations))
        let client = try RawClient(port: running.server.port)
        client.send(Frames.preface + Frames.settings([]) + requests)
        return (running, client)
    }

    @Test("a unary JSON call and a stream over HTTP/2: DATA ends each stream, the stream with its end message")
    func unaryAndStream() async throws {
        let (running, client) = try Self.connected(
            HTTP1.Terminations(),
            // A 300-byte header value: its HPACK length takes continuation bytes, read here by nghttp2.
            sending: Self.post(1, "/coinwatch.v1.Health/Check", "application/json", Array("{}".utf8),
                               extra: [("x-note", String(repeating: "n", count: 300))])
                + Self.post(3, "/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json",
                            HTTP1.envelope(#"{"symbols":["BTC"]}"#), extra: [("connect-timeout-ms", "200")]))
        let bytes = await HTTP1.read(client) { bytes in
            Self.body(of: 1, in: bytes).ended && Self.body(of: 3, in: bytes).ended
        }
        let unary = Self.body(of: 1, in: bytes)
        #expect(String(decoding: unary.body, as: UTF8.self) == #"{"status":"SERVING"}"#)
        let stream = Self.body(of: 3, in: bytes)
        let parts = HTTP1.envelopes(stream.body)
        #expect(parts.map(\.0) == [0, 2])
        #expect(parts.first?.1.contains(#""symbol":"BTC""#) == true)
        #expect(parts.last?.1.contains(#""code":"deadline_exceeded""#) == true)
        #expect(Self.frames(bytes).contains { $0.type == 1 && $0.stream == 3 }, "the stream's response headers")
        await running.server.shutdownNow()
    }

    @Test("RST_STREAM from the client cancels its running Connect stream")
    func resetCancels() async throws {
        let terminations = HTTP1.Terminations()
        let (running, client) = try Self.connected(
            terminations,
            sending: Self.post(1, "/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json",
                               HTTP1.envelope(#"{"symbols":["BTC"]}"#)))
        let bytes = await HTTP1.read(client) { !HTTP1.envelopes(Self.body(of: 1, in: $0).body).isEmpty }
        #expect(HTTP1.envelopes(Self.body(of: 1, in: bytes).body).first?.1.contains("BTC") == true)
        client.send(Frames.frame(Frames.FrameType.rstStream, flags: 0, stream: 1, [0, 0, 0, 8]))  // CANCEL
        #expect(await eventually { terminations.codes.withLock { $0 } == [.cancelled] })
        await running.server.shutdownNow()
    }
}
