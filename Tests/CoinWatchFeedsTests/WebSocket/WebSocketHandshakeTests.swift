import Testing
@testable import CoinWatchFeeds

/// The opening handshake: the request we send and every check on the answer.
struct WebSocketHandshakeTests {
    typealias S = ServerFrames

    static func handshake(_ url: String = "ws://example.test:8080/stream?streams=btcusdt@trade") throws -> WebSocketHandshake {
        WebSocketHandshake(
            url: try WebSocketURL(parsing: url), keyBytes: S.keyBytes, headers: [("User-Agent", "coinwatchd/test")],
            sha1: S.fakeDigest)
    }

    /// Feeds the answer in chunks until the upgrade completes; bytes of later chunks join the remainder.
    static func answer(_ handshake: inout WebSocketHandshake, _ text: String, chunk: Int = .max) throws(WebSocketError)
        -> WebSocketHandshake.Progress
    {
        try answer(&handshake, Array(text.utf8), chunk: chunk)
    }

    static func answer(_ handshake: inout WebSocketHandshake, _ bytes: [UInt8], chunk: Int = .max) throws(WebSocketError)
        -> WebSocketHandshake.Progress
    {
        var offset = 0
        var progress = WebSocketHandshake.Progress.needMore
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            let part = Array(bytes[offset..<end])
            offset = end
            var failure: WebSocketError?
            part.withUnsafeBytes { raw in
                do throws(WebSocketError) {
                    progress = try handshake.receive(raw)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            if case .upgraded(let remainder) = progress {
                return .upgraded(remainder: remainder + bytes[offset...])
            }
        }
        return progress
    }

    @Test func theAcceptValueIsRFC6455sExample() {
        // RFC 6455 §1.3: the key "dGhlIHNhbXBsZSBub25jZQ==" is answered with this accept value.
        #expect(WebSocketHandshake.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==", sha1: FeedCrypto.sha1)
            == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(FeedCrypto.webSocketKey().count == 16)
        #expect(FeedCrypto.webSocketKey() != FeedCrypto.webSocketKey())
    }

    @Test func theRequestAsksForAnUpgradeWithAFreshKey() throws {
        let handshake = try Self.handshake()
        let request = String(decoding: handshake.request, as: UTF8.self)
        #expect(request.hasPrefix("GET /stream?streams=btcusdt@trade HTTP/1.1\r\nHost: example.test:8080\r\n"))
        #expect(request.contains("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Version: 13\r\n"))
        #expect(request.contains("\r\nUser-Agent: coinwatchd/test\r\n"))
        #expect(request.hasSuffix("\r\n\r\n"))
        let defaultPort = WebSocketHandshake(
            url: try WebSocketURL(parsing: "wss://ws.example.test"), keyBytes: S.keyBytes, sha1: S.fakeDigest)
        #expect(String(decoding: defaultPort.request, as: UTF8.self).hasPrefix("GET / HTTP/1.1\r\nHost: ws.example.test\r\n"))
    }

    @Test func aCorrectAnswerUpgradesAndKeepsTheBytesAfterIt() throws {
        for chunk in [1, 5, .max] {
            var handshake = try Self.handshake()
            let text = "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(handshake.expectedAccept)\r\n\r\n"
            let bytes = Array(text.utf8) + [0x81, 0x02, 0x68, 0x69]
            #expect(try Self.answer(&handshake, bytes, chunk: chunk) == .upgraded(remainder: [0x81, 0x02, 0x68, 0x69]))
        }
    }

    @Test func wrongAnswersAreRefused() throws {
        let accept = try Self.handshake().expectedAccept
        let ok = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        let cases: [(String, WebSocketError.Code)] = [
            (ok + "Sec-WebSocket-Accept: s3pPLMBiTxaK9kxb3ETSpb8BnAI=\r\n\r\n", .badAccept),
            (ok + "\r\n", .badAccept),
            ("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n", .handshakeFailed),
            (ok + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
             .handshakeFailed),
            (ok + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: chat\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 403 Forbidden\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 503 Service Unavailable\r\n\r\n", .handshakeFailed),
            ("SSH-2.0-OpenSSH_9.2\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 101 OK\r\nno colon here\r\n\r\n", .handshakeFailed),
            ("HTTP/1.1 101 OK\r\nX: \u{e9}\r\n\r\n", .handshakeFailed),
        ]
        for (text, code) in cases {
            var handshake = try Self.handshake()
            #expect(throws: WebSocketError.self, "\(text)") { _ = try Self.answer(&handshake, text) }
            do {
                _ = try Self.answer(&handshake, text)
            } catch {
                #expect(error.code == code, "\(text)")
            }
        }
    }

    @Test func rateLimitsCarryRetryAfter() throws {
        for (text, seconds) in [
            ("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\n\r\n", 30 as Int?),
            ("HTTP/1.1 429 Too Many Requests\r\n\r\n", nil),
            ("HTTP/1.1 503 Slow Down\r\nRetry-After: 5\r\n\r\n", 5),
        ] {
            var handshake = try Self.handshake()
            do {
                _ = try Self.answer(&handshake, text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .rateLimited)
                #expect(error.retryAfterSeconds == seconds)
            }
        }
    }

    @Test func anEndlessHeadIsRefusedAtItsLimit() throws {
        var handshake = try Self.handshake()
        var refused = false
        var sent = 0
        let line = Array("X-Filler: \(String(repeating: "a", count: 1000))\r\n".utf8)
        var status = Array("HTTP/1.1 101 Switching Protocols\r\n".utf8)
        while !refused && sent < 100 {
            do {
                _ = try (status + line).withUnsafeBytes { raw in try handshake.receive(raw) }
            } catch {
                refused = true
                #expect((error as? WebSocketError)?.code == .handshakeFailed)
            }
            status = []
            sent += 1
        }
        #expect(refused)
        #expect(sent <= WebSocketHandshake.maxHeadBytes / line.count + 2)
    }
}
