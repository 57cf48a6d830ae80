import Testing
@testable import CoinWatchRPC

/// The bytes a connection refused at accept is answered with, for each kind of refusal: a limit says "calm down",
/// a shutdown says "not here any more" (the end-to-end test of a limit's refusal is in HTTPServerTests).
@Suite struct ServerConnectionRefusalTests {
    /// The frames of an HTTP/2 answer, as types and payloads.
    static func frames(_ bytes: [UInt8]) -> [(type: UInt8, payload: [UInt8])] {
        var splitter = HTTP2FrameSplitter(maxFrameBytes: 1 << 14)
        var frames: [(type: UInt8, payload: [UInt8])] = []
        bytes.withUnsafeBytes { bytes in
            try? splitter.feed(bytes) { header, payload in frames.append((header.type, Array(payload))) }
        }
        return frames
    }

    @Test("HTTP/2: SETTINGS then GOAWAY with no stream processed; NO_ERROR for a shutdown, ENHANCE_YOUR_CALM for a limit")
    func http2() {
        let cases: [(RPCError, UInt8)] = [
            (RPCError(code: .unavailable, message: "the server is shutting down"), 0x0),
            (RPCError(code: .resourceExhausted, message: "the server already has 10 connections"), 0xb),
        ]
        for (refusal, errorCode) in cases {
            let frames = Self.frames(ServerConnection.http2Refusal(refusal))
            #expect(frames.map(\.type) == [HTTP2RawFrames.FrameType.settings, HTTP2RawFrames.FrameType.goAway])
            #expect(frames.first?.payload.isEmpty == true, "the server's SETTINGS, with nothing to change")
            let goAway = frames.last?.payload ?? []
            #expect(goAway.prefix(8).elementsEqual([0, 0, 0, 0, 0, 0, 0, errorCode]), "\(refusal.code)")
            #expect(String(decoding: goAway.dropFirst(8), as: UTF8.self) == refusal.message)
        }
    }

    @Test("HTTP/2: a long reason is cut to at most 1 KiB of debug data")
    func http2LongReason() {
        let refusal = RPCError(code: .unavailable, message: String(repeating: "x", count: 5000))
        let goAway = Self.frames(ServerConnection.http2Refusal(refusal)).last?.payload ?? []
        #expect(goAway.count > 8 + 900 && goAway.count <= 8 + 1024, "\(goAway.count)")
        #expect(goAway.dropFirst(8).elementsEqual(refusal.message.utf8.prefix(1024)))
    }

    @Test("HTTP/1.1: 503 with the reason, Retry-After and Connection: close, whatever the refusal")
    func http1() {
        for refusal in [RPCError(code: .unavailable, message: "the server is shutting down"),
                        RPCError(code: .resourceExhausted, message: "too many connections from 127.0.0.1:1")] {
            let text = String(decoding: ServerConnection.http1Refusal(refusal), as: UTF8.self)
            let body = refusal.message + "\n"
            #expect(text == "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
                + "retry-after: 1\r\nconnection: close\r\ncontent-length: \(body.utf8.count)\r\n\r\n" + body)
        }
    }
}
