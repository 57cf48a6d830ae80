import CoinWatchRPC
import Testing

@Suite("FrameDecoder")
struct FrameDecoderTests {
    /// Feeds `chunks` in order and returns the decoded bodies (copied) and the error, if any.
    private func decode(_ chunks: [[UInt8]], maxFrameBytes: Int = 1 << 20) -> (frames: [[UInt8]], error: FrameError?) {
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        var frames: [[UInt8]] = []
        for chunk in chunks {
            do {
                try chunk.withUnsafeBytes { raw in
                    var input = raw
                    while let body = try decoder.next(from: &input) {
                        frames.append(Array(body))
                    }
                    #expect(input.isEmpty)
                }
            } catch {
                return (frames, error as? FrameError)
            }
        }
        return (frames, nil)
    }

    private let bodies: [[UInt8]] = [
        pattern(count: 1, seed: 1), pattern(count: 7, seed: 2), pattern(count: 300, seed: 3),
        pattern(count: 2, seed: 4), pattern(count: 1500, seed: 5),
    ]

    private var stream: [UInt8] { bodies.flatMap { FrameEncoder.frame($0) } }

    @Test("a stream split at every byte boundary decodes to the same frames")
    func everySplitPoint() {
        let stream = self.stream
        for split in 0...stream.count {
            let result = decode([Array(stream[..<split]), Array(stream[split...])])
            #expect(result.error == nil)
            #expect(result.frames == bodies, "split at \(split)")
        }
    }

    @Test("a stream fed one byte at a time, and in three pieces at every pair of points")
    func byteByByteAndThreePieces() {
        let stream = self.stream
        #expect(decode(stream.map { [$0] }).frames == bodies)
        // Pairs of split points around every frame boundary (a full pair sweep is quadratic).
        var boundaries: [Int] = [0]
        for body in bodies { boundaries.append(boundaries.last! + 4 + body.count) }
        for boundary in boundaries {
            for first in max(0, boundary - 5)...min(stream.count, boundary + 5) {
                for second in first...min(stream.count, first + 6) {
                    let chunks = [Array(stream[..<first]), Array(stream[first..<second]), Array(stream[second...])]
                    #expect(decode(chunks).frames == bodies, "splits at \(first), \(second)")
                }
            }
        }
    }

    @Test("many frames in one read come back without copying")
    func manyFramesInOneRead() throws {
        let frames = (0..<1000).map { pattern(count: $0 % 50 + 1, seed: $0) }
        let stream = frames.flatMap { FrameEncoder.frame($0) }
        var decoder = FrameDecoder(maxFrameBytes: 64)
        var decoded: [[UInt8]] = []
        var allInsideInput = true
        try stream.withUnsafeBytes { raw in
            var input = raw
            while let body = try decoder.next(from: &input) {
                let (start, inputStart) = (body.baseAddress!, raw.baseAddress!)
                allInsideInput = allInsideInput && start >= inputStart && start + body.count <= inputStart + raw.count
                decoded.append(Array(body))
            }
        }
        #expect(decoded == frames)
        #expect(allInsideInput)
        #expect(decoder.bufferCapacity == 0)
    }

    @Test("a frame of exactly the limit is accepted")
    func exactlyAtLimit() {
        let body = pattern(count: 1000, seed: 9)
        let result = decode([FrameEncoder.frame(body)], maxFrameBytes: 1000)
        #expect(result.error == nil)
        #expect(result.frames == [body])
    }

    @Test("a length of limit + 1 is rejected from the prefix alone, before any allocation")
    func overLimitRejectedBeforeAllocation() throws {
        var decoder = FrameDecoder(maxFrameBytes: 1000)
        let header = FrameEncoder.header(bodyLength: 1001)
        let error = try #require(throws: FrameError.self) {
            try header.withUnsafeBytes { raw in
                var input = raw
                _ = try decoder.next(from: &input)
            }
        }
        #expect(error.code == .tooLarge)
        #expect(error.declaredLength == 1001)
        #expect(error.message.contains("1001") && error.message.contains("1000"))
        #expect(decoder.bufferCapacity == 0)
        // The decoder stays failed.
        #expect(throws: FrameError.self) {
            try [UInt8(1), 2, 3].withUnsafeBytes { raw in
                var input = UnsafeRawBufferPointer(raw)
                _ = try decoder.next(from: &input)
            }
        }
    }

    @Test("a 4 GiB length is rejected without allocating")
    func hugeLength() {
        let result = decode([[0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]], maxFrameBytes: 4 << 20)
        #expect(result.error?.code == .tooLarge)
        #expect(result.error?.declaredLength == UInt32.max)
    }

    @Test("a zero length is rejected")
    func zeroLength() {
        let body = pattern(count: 5, seed: 1)
        let result = decode([FrameEncoder.frame(body) + [0, 0, 0, 0] + FrameEncoder.frame(body)])
        #expect(result.frames == [body])
        #expect(result.error?.code == .zeroLength)
        #expect(result.error?.message == "frame length 0 is not allowed")
    }

    @Test("HTTP at the start of a connection is recognised", arguments: [
        "GET / HTTP/1.1\r\n", "POST /x HTTP/1.1\r\n", "PRI * HTTP/2.0\r\n", "HEAD / HTTP/1.0\r\n",
    ])
    func httpPeek(request: String) {
        let bytes = Array(request.utf8)
        let whole = decode([bytes])
        #expect(whole.error?.code == .httpRequest)
        #expect(whole.error?.prefix == Array(bytes[..<4]))
        // The same when the request line trickles in.
        let split = decode([Array(bytes[..<2]), Array(bytes[2...])])
        #expect(split.error?.code == .httpRequest)
    }

    @Test("a TLS handshake record at the start of a connection is recognised", arguments: [
        [0x16, 0x03, 0x01, 0x02, 0x00, 0x01] as [UInt8], [0x16, 0x03, 0x03, 0x00, 0x7A, 0x01],
    ])
    func tlsPeek(record: [UInt8]) {
        let whole = decode([record])
        #expect(whole.error?.code == .tlsHandshake)
        #expect(whole.error?.prefix == Array(record[..<4]))
        let split = decode([Array(record[..<1]), Array(record[1...])])
        #expect(split.error?.code == .tlsHandshake)
        // The same bytes after a frame are only a length too large.
        let later = decode([FrameEncoder.frame([1]) + record])
        #expect(later.error?.code == .tooLarge)
    }

    @Test("HTTP-looking bytes after the first frame are just an oversized length")
    func httpLaterIsTooLarge() {
        let body = pattern(count: 3, seed: 2)
        let result = decode([FrameEncoder.frame(body) + Array("GET / HTTP/1.1".utf8)])
        #expect(result.frames == [body])
        #expect(result.error?.code == .tooLarge)
    }

    @Test("a frame split across reads grows its buffer with the data, never past the frame")
    func partialBufferIsBounded() throws {
        let body = pattern(count: 10_000, seed: 4)
        let stream = FrameEncoder.frame(body)
        var decoder = FrameDecoder(maxFrameBytes: 1 << 20)
        var decoded: [[UInt8]] = []
        var capacities: [Int] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 100)
            try Array(stream[offset..<end]).withUnsafeBytes { raw in
                var input = raw
                while let frame = try decoder.next(from: &input) {
                    decoded.append(Array(frame))
                }
            }
            capacities.append(decoder.bufferCapacity)
            offset = end
        }
        #expect(decoded == [body])
        #expect(capacities.max()! <= body.count)
        // Early on, the buffer is far smaller than the announced frame.
        #expect(capacities[1] < 1000)
        // A large delivered frame's buffer is released on the next call.
        try [UInt8]().withUnsafeBytes { raw in
            var input = raw
            _ = try decoder.next(from: &input)
        }
        #expect(decoder.bufferCapacity == 0)
    }

    @Test("the encoder writes a 4-byte big-endian length")
    func encoderHeader() {
        #expect(FrameEncoder.header(bodyLength: 0x0102_0304) == [1, 2, 3, 4])
        #expect(FrameEncoder.header(bodyLength: 5) == [0, 0, 0, 5])
        var bytes = [UInt8](repeating: 0, count: 4)
        bytes.withUnsafeMutableBytes { FrameEncoder.writeHeader(bodyLength: 70000, to: $0.baseAddress!) }
        #expect(bytes == [0, 1, 0x11, 0x70])
    }
}
