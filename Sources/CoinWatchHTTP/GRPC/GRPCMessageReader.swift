/// Splits a gRPC request body into messages: 1 flag byte (compressed or not), a 4-byte big-endian length,
/// the message. Independent of how the body arrives in DATA frames (a message may span frames, a frame may
/// hold several messages).
///
/// The length is checked against the limit from the 5 prefix bytes alone, before anything is buffered.
package struct GRPCMessageReader {
    package enum Failure: Equatable {
        /// The message is larger than the limit (RESOURCE_EXHAUSTED).
        case tooLarge(Int)
        /// The compressed flag is set; this server accepts only identity (UNIMPLEMENTED).
        case compressed
        /// The flag byte is neither 0 nor 1 (INTERNAL).
        case badFlag(UInt8)
    }

    package let maxMessageBytes: Int
    /// The prefix bytes read so far (big-endian in the low bytes) and how many: kept inline, as a reader is made
    /// per stream and an array here would be an allocation per call.
    private var prefix: UInt64 = 0
    private var prefixCount = 0
    private var expected = -1
    private var message: [UInt8] = []
    package private(set) var failure: Failure?

    package init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Whether a message has begun and is not complete (the body may not end here).
    var isInsideMessage: Bool { prefixCount > 0 || expected >= 0 }

    /// Feeds body bytes; calls `deliver` with each complete message (valid during the call). Stops at the first
    /// failure, which stays set.
    package mutating func append(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Void) {
        var input = bytes[...]
        while failure == nil && !input.isEmpty {
            if expected < 0 {
                while prefixCount < 5, let byte = input.first {
                    prefix = prefix << 8 | UInt64(byte)
                    prefixCount += 1
                    input = input.dropFirst()
                }
                guard prefixCount == 5 else { return }
                let flag = UInt8(truncatingIfNeeded: prefix >> 32)
                switch flag {
                case 0: break
                case 1: failure = .compressed; return
                default: failure = .badFlag(flag); return
                }
                let length = Int(prefix & 0xFFFF_FFFF)
                guard length <= maxMessageBytes else {
                    failure = .tooLarge(length)
                    return
                }
                prefix = 0
                prefixCount = 0
                expected = length
                if length == 0 {
                    expected = -1
                    deliver(UnsafeRawBufferPointer(start: nil, count: 0))
                    continue
                }
                // The whole message is in this chunk: no copy.
                if message.isEmpty && input.count >= length {
                    deliver(UnsafeRawBufferPointer(rebasing: input.prefix(length)))
                    input = input.dropFirst(length)
                    expected = -1
                    continue
                }
                message.reserveCapacity(length)
            }
            let take = min(expected - message.count, input.count)
            message.append(contentsOf: input.prefix(take))
            input = input.dropFirst(take)
            if message.count == expected {
                message.withUnsafeBytes { deliver($0) }
                message = []
                expected = -1
            }
        }
    }

    /// Writes the 5-byte prefix of an uncompressed message of `length` bytes into `buffer`.
    package static func writePrefix(length: Int, into buffer: inout [UInt8]) {
        let value = UInt32(length)
        buffer.append(0)
        buffer.append(UInt8(value >> 24))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value))
    }
}
