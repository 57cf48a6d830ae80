import CoinWatchProto
import CoinWatchRPC

/// One StreamPrices call over the Connect protocol as a browser's `fetch` makes it: HTTP/1.1, one connection per
/// stream, `application/connect+proto`, the answer read as a chunked body of envelopes. Counts deliveries,
/// latency and sequence gaps exactly like `StreamSubscriber`, so the two transports compare in the same run.
final class ConnectStreamSubscriber: RawStreamSubscriber, @unchecked Sendable {
    private var parser = ConnectResponseParser()

    /// The HTTP/1.1 request of the call: the headers a browser's fetch sends that matter to the server.
    static func request(host: String, port: Int, streamRequest: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        ConnectEnvelopeWriter.append(streamRequest, to: &body)
        let head = "POST /\(V1.CoinWatch.streamPrices.path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
            + "Content-Type: application/connect+proto\r\nConnect-Protocol-Version: 1\r\nAccept: */*\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    override func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        do throws(ConnectResponseParser.Failure) {
            try parser.feed(bytes) { flags, message in
                if flags & 0x02 != 0 {
                    failed = phase.current != .stopping
                } else {
                    deliveries.record(message, measuring: phase.current == .measuring)
                }
            }
        } catch {
            fail()
        }
    }
}

/// Connect's 5-byte envelope header, for the request body.
enum ConnectEnvelopeWriter {
    static func append(_ message: [UInt8], to out: inout [UInt8]) {
        let count = UInt32(message.count)
        out += [0, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        out += message
    }
}

/// Reads an HTTP/1.1 response carrying a Connect stream: the status line and headers, then the body (chunked,
/// or of a `Content-Length`), split into envelopes. Bounded: a head over 16 KiB or an envelope over 4 MiB fails.
struct ConnectResponseParser {
    struct Failure: Error {
        let reason: String
    }

    private enum State {
        case head
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case body(remaining: Int)
        case done
    }

    private var state = State.head
    private var pending: [UInt8] = []
    /// Body bytes not yet a whole envelope.
    private var body: [UInt8] = []

    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onEnvelope: (UInt8, UnsafeRawBufferPointer) -> Void)
        throws(Failure)
    {
        pending.append(contentsOf: bytes)
        var index = 0
        while index < pending.count {
            switch state {
            case .head:
                guard let end = find([13, 10, 13, 10], from: index) else {
                    guard pending.count - index < 16384 else { throw Failure(reason: "response head over 16 KiB") }
                    break
                }
                let head = String(decoding: pending[index..<end], as: UTF8.self).lowercased()
                guard head.hasPrefix("http/1.1 200") else { throw Failure(reason: "status: \(head.prefix(40))") }
                let lines = head.split(separator: "\r\n")
                let lengthLine = lines.first { $0.hasPrefix("content-length:") }
                if lines.contains(where: { $0.hasPrefix("transfer-encoding:") && $0.hasSuffix("chunked") }) {
                    state = .chunkSize
                } else if let lengthLine, let length = Int(lengthLine.dropFirst(15).filter { $0 != " " }) {
                    state = .body(remaining: length)
                } else {
                    throw Failure(reason: "neither chunked nor a content length")
                }
                index = end + 4
                continue
            case .chunkSize:
                guard let end = find([13, 10], from: index) else { break }
                let text = String(decoding: pending[index..<end], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(text, radix: 16), size >= 0 else { throw Failure(reason: "bad chunk size") }
                state = size == 0 ? .done : .chunkData(remaining: size)
                index = end + 2
                continue
            case .chunkData(let remaining):
                let take = min(remaining, pending.count - index)
                try append(pending[index..<(index + take)], onEnvelope)
                index += take
                state = remaining == take ? .chunkEnd : .chunkData(remaining: remaining - take)
                continue
            case .chunkEnd:
                guard pending.count - index >= 2 else { break }
                index += 2
                state = .chunkSize
                continue
            case .body(let remaining):
                let take = min(remaining, pending.count - index)
                try append(pending[index..<(index + take)], onEnvelope)
                index += take
                state = remaining == take ? .done : .body(remaining: remaining - take)
                continue
            case .done:
                index = pending.count
                continue
            }
            break
        }
        pending.removeFirst(index)
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>, _ onEnvelope: (UInt8, UnsafeRawBufferPointer) -> Void)
        throws(Failure)
    {
        body.append(contentsOf: bytes)
        var start = 0
        while body.count - start >= 5 {
            let length = Int(body[start + 1]) << 24 | Int(body[start + 2]) << 16 | Int(body[start + 3]) << 8
                | Int(body[start + 4])
            guard length <= 4 << 20 else { throw Failure(reason: "envelope of \(length) bytes") }
            guard body.count - start - 5 >= length else { break }
            let flags = body[start]
            body.withUnsafeBytes { onEnvelope(flags, UnsafeRawBufferPointer(rebasing: $0[(start + 5)..<(start + 5 + length)])) }
            start += 5 + length
        }
        body.removeFirst(start)
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard pending.count - start >= needle.count else { return nil }
        for position in start...(pending.count - needle.count)
        where pending[position] == needle[0] && Array(pending[position..<(position + needle.count)]) == needle {
            return position
        }
        return nil
    }
}
