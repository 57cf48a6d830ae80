/// Splits a byte stream into frames: a 4-byte big-endian body length, then the body.
///
/// A state machine (waiting for the length / waiting for `L` body bytes) fed with whatever each
/// read returned. A frame that lies entirely inside the input is returned as a slice of the input,
/// with no copy; only a frame split across reads is accumulated, in a buffer that grows with the
/// bytes actually received and never beyond the frame's length. The length is checked against
/// `maxFrameBytes` from the 4 prefix bytes alone, before any allocation, so a hostile prefix costs
/// nothing.
///
/// ```swift
/// var decoder = FrameDecoder(maxFrameBytes: 1 << 20)
/// var input = UnsafeRawBufferPointer(bytesJustRead)
/// while let body = try decoder.next(from: &input) {
///     handle(body)   // valid until the next call to `next`
/// }
/// ```
///
/// Non-copyable because it owns the accumulation buffer that returned frames may point into.
public struct FrameDecoder: ~Copyable {
    private enum State {
        /// `count` prefix bytes received so far, accumulated in `value`.
        case header(value: UInt32, count: Int)
        /// Waiting for a body of `length` bytes (`partialCount` of them already buffered).
        case body(length: Int)
        case failed(FrameError)
    }

    /// The largest body accepted.
    public let maxFrameBytes: Int
    private var state: State = .header(value: 0, count: 0)
    private var partial: UnsafeMutableRawPointer?
    private var partialCapacity = 0
    private var partialCount = 0
    /// The last frame returned lives in `partial`, which may be reused on the next call.
    private var returnedPartial = false
    /// No prefix decoded yet: the first 4 bytes of the stream are still ahead (HTTP detection).
    private var atStreamStart = true

    /// A partial buffer at most this large is kept for the next split frame; larger ones are freed
    /// once their frame is delivered, so a connection that once received a big frame does not
    /// hold on to that memory while idle.
    static let retainedPartialCapacity = 2048

    /// Default limit: 4 MiB, gRPC's default maximum receive size.
    public static let defaultMaxFrameBytes = 4 << 20

    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        precondition(maxFrameBytes > 0 && maxFrameBytes <= Int(UInt32.max), "maxFrameBytes out of range")
        self.maxFrameBytes = maxFrameBytes
    }

    deinit {
        partial?.deallocate()
    }

    /// Bytes of an incomplete frame currently buffered (0 between frames).
    public var bufferedByteCount: Int {
        if case .header(_, let count) = state { return count }
        return returnedPartial ? 0 : partialCount
    }

    /// Capacity of the accumulation buffer (for memory accounting and tests).
    public var bufferCapacity: Int { partialCapacity }

    /// Returns the next complete frame body, consuming its bytes from the front of `input`; nil
    /// when `input` is used up without completing a frame (the remainder is buffered).
    ///
    /// The returned buffer points into `input` or into the decoder; it is valid until the next call
    /// on this decoder and until `input`'s memory is reused.
    /// - Throws: `FrameError` for a zero or oversized length. The decoder stays failed and throws the
    ///   same error on every later call.
    public mutating func next(from input: inout UnsafeRawBufferPointer) throws(FrameError) -> UnsafeRawBufferPointer? {
        if returnedPartial {
            returnedPartial = false
            partialCount = 0
            if partialCapacity > Self.retainedPartialCapacity { releasePartial() }
        }
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .header(var value, var count):
                if count == 0 && input.count >= FrameEncoder.headerSize {
                    // Fast path: the whole prefix is in the input.
                    value = UInt32(bigEndian: input.loadUnaligned(as: UInt32.self))
                    input = UnsafeRawBufferPointer(rebasing: input[FrameEncoder.headerSize...])
                } else {
                    while count < FrameEncoder.headerSize, let byte = input.first {
                        value = value << 8 | UInt32(byte)
                        count += 1
                        input = UnsafeRawBufferPointer(rebasing: input[1...])
                    }
                    guard count == FrameEncoder.headerSize else {
                        state = .header(value: value, count: count)
                        return nil
                    }
                }
                let length = try validate(value)
                if input.count >= length {
                    // Zero-copy: the body is inside the input.
                    state = .header(value: 0, count: 0)
                    let body = UnsafeRawBufferPointer(rebasing: input[..<length])
                    input = UnsafeRawBufferPointer(rebasing: input[length...])
                    return body
                }
                state = .body(length: length)
            case .body(let length):
                if partialCount == 0 && input.count >= length {
                    state = .header(value: 0, count: 0)
                    let body = UnsafeRawBufferPointer(rebasing: input[..<length])
                    input = UnsafeRawBufferPointer(rebasing: input[length...])
                    return body
                }
                let take = min(length - partialCount, input.count)
                guard take > 0 else { return nil }
                appendPartial(UnsafeRawBufferPointer(rebasing: input[..<take]), frameLength: length)
                input = UnsafeRawBufferPointer(rebasing: input[take...])
                guard partialCount == length else { return nil }
                state = .header(value: 0, count: 0)
                returnedPartial = true
                return UnsafeRawBufferPointer(start: partial, count: length)
            }
        }
    }

    /// Frees the accumulation buffer (e.g. when the connection closes).
    public mutating func releaseBuffer() {
        releasePartial()
        partialCount = 0
        returnedPartial = false
    }

    private mutating func validate(_ value: UInt32) throws(FrameError) -> Int {
        let isFirst = atStreamStart
        atStreamStart = false
        let error: FrameError
        if value == 0 {
            error = .zeroLength(limit: maxFrameBytes)
        } else if Int(value) > maxFrameBytes {
            // Only a prefix we would reject anyway is examined, so a legal frame is never mistaken.
            if isFirst && Self.isHTTPPrefix(value) {
                error = .httpRequest(value, limit: maxFrameBytes)
            } else if isFirst && Self.isTLSHandshakePrefix(value) {
                error = .tlsHandshake(value, limit: maxFrameBytes)
            } else {
                error = .tooLarge(value, limit: maxFrameBytes)
            }
        } else {
            return Int(value)
        }
        state = .failed(error)
        throw error
    }

    /// Whether 4 bytes (read as a big-endian integer) start an HTTP/1 request or the HTTP/2 preface.
    public static func isHTTPPrefix(_ value: UInt32) -> Bool {
        httpPrefixes.contains(value)
    }

    /// Whether 4 bytes (read as a big-endian integer) start a TLS handshake record: content type 22
    /// (handshake), then a protocol version 3.x (SSL 3.0 to TLS 1.3 all write 0x03 first).
    public static func isTLSHandshakePrefix(_ value: UInt32) -> Bool {
        value >> 16 == 0x1603 && (value >> 8) & 0xFF <= 0x04
    }

    private static let httpPrefixes: [UInt32] = ["GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC",
                                                 "CONN", "TRAC", "PRI "].map { text in
        text.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    private mutating func appendPartial(_ bytes: UnsafeRawBufferPointer, frameLength: Int) {
        let needed = partialCount + bytes.count
        if needed > partialCapacity {
            // Grow geometrically for amortized O(1) appends, but never past the frame's own length.
            let newCapacity = min(frameLength, max(needed, partialCapacity * 2, 256))
            let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if let partial {
                newBuffer.copyMemory(from: partial, byteCount: partialCount)
                partial.deallocate()
            }
            partial = newBuffer
            partialCapacity = newCapacity
        }
        (partial! + partialCount).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        partialCount = needed
    }

    private mutating func releasePartial() {
        partial?.deallocate()
        partial = nil
        partialCapacity = 0
    }
}
