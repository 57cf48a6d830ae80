/// HTTP/2 frames made and split by hand (RFC 9113 §4.1), for what speaks just enough HTTP/2 without a library in
/// the way: the load tool's gRPC subscribers, the transport tests, recognising the preface on the shared port, and
/// refusing an HTTP/2 connection at accept (`ServerConnection+Refusal`). The server serves HTTP/2 through nghttp2
/// (`NGHTTP2Session`, in CoinWatchHTTP).
package enum HTTP2RawFrames {
    /// The client connection preface (RFC 9113 §3.4), sent first by a client with prior knowledge.
    package static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    package enum FrameType {
        package static let data: UInt8 = 0x0
        package static let headers: UInt8 = 0x1
        package static let rstStream: UInt8 = 0x3
        package static let settings: UInt8 = 0x4
        package static let ping: UInt8 = 0x6
        package static let goAway: UInt8 = 0x7
        package static let windowUpdate: UInt8 = 0x8
    }

    package enum Flag {
        /// END_STREAM on DATA and HEADERS; ACK on SETTINGS and PING (the same bit).
        package static let endStream: UInt8 = 0x1
        package static let ack: UInt8 = 0x1
        package static let endHeaders: UInt8 = 0x4
        package static let padded: UInt8 = 0x8
    }

    /// SETTINGS_INITIAL_WINDOW_SIZE (RFC 9113 §6.5.2).
    package static let initialWindowSize: UInt16 = 0x4
    /// The largest flow-control window (RFC 9113 §6.9.1).
    package static let maxWindow: UInt32 = 0x7FFF_FFFF

    /// One frame: the 9-byte header, then `payload`.
    package static func frame(_ type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        var out: [UInt8] = [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
        append32(stream & 0x7FFF_FFFF, to: &out)
        return out + payload
    }

    /// A SETTINGS frame carrying `values` (identifier, value).
    package static func settings(_ values: [(UInt16, UInt32)]) -> [UInt8] {
        var payload: [UInt8] = []
        for (identifier, value) in values {
            payload += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
            append32(value, to: &payload)
        }
        return frame(FrameType.settings, flags: 0, stream: 0, payload)
    }

    /// A WINDOW_UPDATE granting `increment` more bytes on `stream` (0: the connection).
    package static func windowUpdate(stream: UInt32, increment: UInt32) -> [UInt8] {
        var payload: [UInt8] = []
        append32(increment & 0x7FFF_FFFF, to: &payload)
        return frame(FrameType.windowUpdate, flags: 0, stream: stream, payload)
    }

    /// A header block of literals without indexing, new names, no Huffman coding (RFC 7541 §6.2.2): what every
    /// HPACK decoder must take, and the table needs no state on either side.
    package static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0)
            appendString(name, to: &block)
            appendString(value, to: &block)
        }
        return block
    }

    /// A string literal: its length as a 7-bit-prefix integer (RFC 7541 §5.1, H = 0), then the octets.
    private static func appendString(_ text: String, to block: inout [UInt8]) {
        var length = text.utf8.count
        if length < 127 {
            block.append(UInt8(length))
        } else {
            block.append(127)
            length -= 127
            while length >= 128 {
                block.append(UInt8(length & 0x7F) | 0x80)
                length >>= 7
            }
            block.append(UInt8(length))
        }
        block.append(contentsOf: text.utf8)
    }

    private static func append32(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Splits bytes as they arrive into HTTP/2 frames. A frame longer than `maxFrameBytes` is refused from its
/// header, before anything is buffered; only the tail of a read that is not yet a whole frame is kept.
package struct HTTP2FrameSplitter {
    package struct Header {
        package let length: Int
        package let type: UInt8
        package let flags: UInt8
        package let stream: UInt32
    }

    package struct Failure: Error {
        package let length: Int
    }

    package let maxFrameBytes: Int
    private var pending: [UInt8] = []

    package init(maxFrameBytes: Int = 1 << 24) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// Feeds bytes; calls `onFrame` with each whole frame, its payload valid during the call.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onFrame: (Header, UnsafeRawBufferPointer) -> Void)
        throws(Failure)
    {
        if pending.isEmpty {
            let used = try split(bytes, onFrame)
            if used < bytes.count { pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used...])) }
            return
        }
        pending.append(contentsOf: bytes)
        let used = pending.withUnsafeBytes { whole in Result { () throws(Failure) in try split(whole, onFrame) } }
        pending.removeFirst(try used.get())
    }

    /// The whole frames at the start of `bytes`, handed to `onFrame`; returns how many bytes they took.
    private func split(_ bytes: UnsafeRawBufferPointer, _ onFrame: (Header, UnsafeRawBufferPointer) -> Void)
        throws(Failure) -> Int
    {
        var position = 0
        while bytes.count - position >= 9 {
            let length = Int(bytes[position]) << 16 | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2])
            guard length <= maxFrameBytes else { throw Failure(length: length) }
            guard bytes.count - position - 9 >= length else { break }
            let stream = UInt32(bytes[position + 5] & 0x7F) << 24 | UInt32(bytes[position + 6]) << 16
                | UInt32(bytes[position + 7]) << 8 | UInt32(bytes[position + 8])
            let header = Header(length: length, type: bytes[position + 3], flags: bytes[position + 4], stream: stream)
            onFrame(header, UnsafeRawBufferPointer(rebasing: bytes[(position + 9)..<(position + 9 + length)]))
            position += 9 + length
        }
        return position
    }
}
