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

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// A request's header block: HPACK literals without indexing, new names, no Huffman (RFC 7541 §6.2.2).
    static func headers(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0)
            block.append(UInt8(name.utf8.count))
            block.append(contentsOf: name.utf8)
            block.append(UInt8(value.utf8.count))
            block.append(contentsOf: value.utf8)
        }
        return block
    }

    /// A POST on stream `id` with `body` (HEADERS, then DATA ending the stream).
    static func post(_ id: UInt32, _ path: String, _ contentType: String, _ body: [UInt8], extra: [(String, String)] = []) -> [UInt8] {
        frame(1, 0x4, id, headers([(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "t"),
                                   ("content-type", contentType)] + extra))
            + frame(0, 0x1, id, body)
    }

    /// The server's frames so far: (type, flags, stream, payload); nil while the last one is incomplete.
    static func frames(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] {
        var out: [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] = []
        var position = 0
        while bytes.count - position >= 9 {
            let length = Int(bytes[position]) << 16 | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2])
            guard bytes.count - position - 9 >= length else { break }
            let stream = UInt32(bytes[position + 5] & 0x7F) << 24 | UInt32(bytes[position + 6]) << 16
                | UInt32(bytes[position + 7]) << 8 | UInt32(bytes[position + 8])
            out.append((bytes[position + 3], bytes[position + 4], stream, Array(bytes[(position + 9)..<(position + 9 + length)])))
            position += 9 + length
        }
        return out
    }

    /// The DATA bytes of `stream`, and whether its last DATA frame ended it.
    static func body(of stream: UInt32, in bytes: [UInt8]) -> (body: [UInt8], ended: Bool) {
        let data = frames(bytes).filter { $0.type == 0 && $0.stream == stream }
        return (data.flatMap(\.payload), data.last.map { $0.flags & 0x1 != 0 } ?? false)
    }

    /// A server with the stream method, and an HTTP/2 client that has sent the preface, SETTINGS and `requests`.
    static func connected(_ terminations: HTTP1.Terminations, sending requests: [UInt8]) throws -> (HTTP1.Running, HTTP1.Client) {
        let running = try HTTP1.Running(methods: HTTP1.methods(terminations))
        let client = try HTTP1.Client(port: running.server.port)
        client.raw.send(preface + frame(4, 0, 0) + requests)
        return (running, client)
    }

    @Test("a unary JSON call and a stream over HTTP/2: DATA ends each stream, the stream with its end message")
    func unaryAndStream() async throws {
        let (running, client) = try Self.connected(
            HTTP1.Terminations(),
            sending: Self.post(1, "/coinwatch.v1.Health/Check", "application/json", Array("{}".utf8))
                + Self.post(3, "/coinwatch.v1.CoinWatch/StreamPrices", "application/connect+json",
                            HTTP1.envelope(#"{"symbols":["BTC"]}"#), extra: [("connect-timeout-ms", "200")]))
        let bytes = try await HTTP1.read(client) { bytes in
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
        let bytes = try await HTTP1.read(client) { !HTTP1.envelopes(Self.body(of: 1, in: $0).body).isEmpty }
        #expect(HTTP1.envelopes(Self.body(of: 1, in: bytes).body).first?.1.contains("BTC") == true)
        client.raw.send(Self.frame(3, 0, 1, [0, 0, 0, 8]))  // RST_STREAM(CANCEL)
        #expect(await eventually { terminations.codes.withLock { $0 } == [.cancelled] })
        await running.server.shutdownNow()
    }
}
