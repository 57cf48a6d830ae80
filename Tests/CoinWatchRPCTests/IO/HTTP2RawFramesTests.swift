import Testing
@testable import CoinWatchRPC

@Suite struct HTTP2RawFramesTests {
    typealias Frames = HTTP2RawFrames

    @Test("a frame's header: 24-bit length, type, flags, and the stream with the reserved bit clear")
    func frameHeader() {
        let frame = Frames.frame(Frames.FrameType.data, flags: Frames.Flag.endStream, stream: 0x8000_0003, [7, 8])
        #expect(frame == [0, 0, 2, 0, 1, 0, 0, 0, 3, 7, 8])
        #expect(Frames.windowUpdate(stream: 1, increment: 0x1_0000) == [0, 0, 4, 8, 0, 0, 0, 0, 1, 0, 1, 0, 0])
        #expect(Frames.settings([(Frames.initialWindowSize, Frames.maxWindow)]) == [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0x7F, 0xFF, 0xFF, 0xFF])
    }

    @Test("header literals: lengths of 127 bytes and more continue in 7-bit groups (RFC 7541 §5.1)",
          arguments: [(126, [126] as [UInt8]), (127, [127, 0]), (200, [127, 73]), (300, [127, 0xAD, 1])])
    func literalLengths(length: Int, prefix: [UInt8]) {
        let value = String(repeating: "v", count: length)
        let block = Frames.headerBlock([("n", value)])
        #expect(block == [0, 1, UInt8(ascii: "n")] + prefix + Array(value.utf8))
    }

    @Test("frames come out whole however the bytes are split, and only an incomplete tail is kept")
    func splitting() {
        let stream = Frames.frame(Frames.FrameType.headers, flags: 4, stream: 1, [1, 2, 3])
            + Frames.frame(Frames.FrameType.data, flags: 0, stream: 1, [])
            + Frames.frame(Frames.FrameType.data, flags: 1, stream: 1, Array(repeating: 9, count: 40))
        let expected: [[UInt8]] = [[1, 1, 2, 3], [0], [0] + Array(repeating: 9, count: 40)]
        for chunk in 1...stream.count {
            var splitter = HTTP2FrameSplitter()
            var seen: [[UInt8]] = []
            var start = 0
            while start < stream.count {
                let end = min(stream.count, start + chunk)
                Array(stream[start..<end]).withUnsafeBytes { bytes in
                    do {
                        try splitter.feed(bytes) { header, payload in
                            #expect(header.length == payload.count && header.stream == 1)
                            seen.append([header.type] + Array(payload))
                        }
                    } catch {
                        Issue.record("refused: \(error)")
                    }
                }
                start = end
            }
            #expect(seen == expected, "chunks of \(chunk)")
        }
    }

    @Test("a frame longer than the limit is refused from its header, before its payload arrives")
    func oversized() {
        var splitter = HTTP2FrameSplitter(maxFrameBytes: 16)
        let header: [UInt8] = [0, 0, 17, 0, 0, 0, 0, 0, 1]
        var refused: HTTP2FrameSplitter.Failure?
        header.withUnsafeBytes { bytes in
            do throws(HTTP2FrameSplitter.Failure) {
                try splitter.feed(bytes) { _, _ in Issue.record("no frame expected") }
            } catch {
                refused = error
            }
        }
        #expect(refused?.length == 17)
    }
}
