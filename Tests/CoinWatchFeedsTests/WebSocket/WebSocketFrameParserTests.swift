import Testing
@testable import CoinWatchFeeds

/// The server-frame parser: every split of the input gives the same messages, limits hold before buffering, and each
/// RFC 6455 violation is refused with its close code.
struct WebSocketFrameParserTests {
    typealias S = ServerFrames

    enum Seen: Equatable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        case close(UInt16?, String)
    }

    /// Parses `bytes` in chunks of `chunk` bytes.
    static func parse(
        _ bytes: [UInt8], chunk: Int = .max, max: Int = 1 << 20, parser existing: WebSocketFrameParser? = nil
    ) -> (seen: [Seen], error: WebSocketError?, parser: WebSocketFrameParser) {
        var parser = existing ?? WebSocketFrameParser(maxMessageBytes: max)
        var seen: [Seen] = []
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + Swift.max(1, min(chunk, bytes.count)))
            let part = Array(bytes[offset..<end])
            offset = end
            do {
                try S.withBytes(part) { (raw) throws(WebSocketError) in
                    try parser.parse(raw) { event in
                        switch event {
                        case .message(.text, let payload): seen.append(.text(String(decoding: payload, as: UTF8.self)))
                        case .message(_, let payload): seen.append(.binary(Array(payload)))
                        case .ping(let payload): seen.append(.ping(Array(payload)))
                        case .pong(let payload): seen.append(.pong(Array(payload)))
                        case .close(let code, let reason): seen.append(.close(code, reason))
                        }
                    }
                }
            } catch {
                return (seen, error, parser)
            }
        } while offset < bytes.count
        return (seen, nil, parser)
    }

    @Test func everySplitOfAStreamGivesTheSameMessages() {
        let long = String(repeating: "x", count: 300)
        let huge = Array(repeating: UInt8(7), count: 70_000)
        let stream = S.text("{\"a\":1}") + S.frame(0x2, [1, 2, 3]) + S.text(long)
            + S.text("frag", fin: false) + S.frame(0x9, [9]) + S.frame(0x0, Array("men".utf8), fin: false)
            + S.frame(0xA, []) + S.frame(0x0, Array("ted".utf8)) + S.frame(0x2, huge) + S.text("")
            + S.frame(0x1, Array("64".utf8), forceLength64: true) + S.close(1000, "bye") + S.text("after close")
        let expected: [Seen] = [
            .text("{\"a\":1}"), .binary([1, 2, 3]), .text(long), .ping([9]), .pong([]), .text("fragmented"),
            .binary(huge), .text(""), .text("64"), .close(1000, "bye"),
        ]
        for chunk in [1, 2, 3, 7, 64, 1000, 65_536, .max] {
            let result = Self.parse(stream, chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.seen == expected, "chunk \(chunk)")
            #expect(result.parser.isDone)
        }
    }

    @Test func violationsAreRefusedWithProtocolError() {
        let cases: [(String, [UInt8])] = [
            ("masked", S.frame(0x1, Array("hi".utf8), mask: 0x0102_0304)),
            ("reserved bits", S.frame(0x1, Array("hi".utf8), rsv: 4)),
            ("unknown opcode", S.frame(0x3, [])),
            ("unknown control opcode", S.frame(0xB, [])),
            ("long control frame", S.frame(0x9, Array(repeating: 1, count: 126))),
            ("fragmented control frame", S.frame(0x9, [1], fin: false)),
            ("continuation without a message", S.frame(0x0, [1])),
            ("a message inside a message", S.text("a", fin: false) + S.text("b")),
            ("one-byte close", S.frame(0x8, [3])),
            ("reserved close code 1005", S.close(1005)),
            ("reserved close code 1006", S.close(1006)),
            ("close code 999", S.close(999)),
            ("close code 1004", S.close(1004)),
            ("close code 5000", S.close(5000)),
            ("top bit of a 64-bit length", [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]),
        ]
        for (name, bytes) in cases {
            for chunk in [1, .max] {
                let result = Self.parse(bytes, chunk: chunk)
                #expect(result.error?.code == .protocolError, "\(name) chunk \(chunk)")
                #expect(result.error?.closeCode == 1002, "\(name)")
                #expect(result.parser.isDone, "\(name)")
            }
        }
    }

    @Test func validCloseCodesAreAccepted() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999] {
            #expect(Self.parse(S.close(code, "r")).seen == [.close(code, "r")], "\(code)")
        }
        #expect(Self.parse(S.frame(0x8, [])).seen == [.close(nil, "")])
        let badReason = Self.parse(S.frame(0x8, [0x03, 0xE8, 0xC3, 0x28]))
        #expect(badReason.error?.closeCode == 1007)
    }

    @Test func aMessageOverTheLimitFailsAtItsHeaderWithoutBuffering() {
        // A frame header announcing 100 MiB: refused before a payload byte is read.
        var header: [UInt8] = [0x81, 127]
        for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8(truncatingIfNeeded: (100 << 20) >> shift)) }
        let result = Self.parse(header + Array(repeating: 0x41, count: 4096), chunk: 512, max: 64 * 1024)
        #expect(result.error?.code == .messageTooBig)
        #expect(result.error?.closeCode == 1009)
        #expect(result.parser.bufferedBytes == 0)

        // Exactly the limit passes; one byte more fails.
        #expect(Self.parse(S.frame(0x2, Array(repeating: 1, count: 1000)), max: 1000).error == nil)
        #expect(Self.parse(S.frame(0x2, Array(repeating: 1, count: 1001)), max: 1000).error?.closeCode == 1009)
    }

    @Test func endlessContinuationFramesStopAtTheLimit() {
        var parser = WebSocketFrameParser(maxMessageBytes: 10_000)
        var stream = S.text("start", fin: false)
        var failure: WebSocketError?
        var frames = 0
        // Each round sends more continuation frames; the parser's buffer never exceeds the limit.
        while failure == nil && frames < 100_000 {
            stream += S.frame(0x0, Array(repeating: 0x61, count: 100), fin: false)
            frames += 1
            let result = Self.parse(stream, parser: parser)
            parser = result.parser
            failure = result.error
            stream = []
            #expect(parser.bufferedBytes <= 10_000)
        }
        #expect(failure?.closeCode == 1009)
        #expect(frames < 200)
    }

    @Test func largeSingleFramesArriveInPlaceAndSplitOnesAreAssembled() {
        let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0) }
        #expect(Self.parse(S.frame(0x2, payload)).seen == [.binary(payload)])
        #expect(Self.parse(S.frame(0x2, payload), chunk: 4096).seen == [.binary(payload)])
    }
}
