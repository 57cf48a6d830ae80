import CoinWatchHTTP
import CoinWatchProto
import CoinWatchRPC

/// One StreamPrices call over gRPC as a stock client makes it: HTTP/2 with prior knowledge, one connection per
/// stream, `application/grpc`. Read with hand-split frames rather than a gRPC library, so the reader costs
/// about what the native subscriber does and the figure is the server's, not the load tool's. Counts
/// deliveries, latency and sequence gaps exactly like `StreamSubscriber`.
///
/// It behaves as a reader that keeps up: the stream's and the connection's windows open at the largest size
/// and are topped up as DATA is read; SETTINGS and PING are acknowledged.
final class GRPCStreamSubscriber: RawStreamSubscriber, @unchecked Sendable {
    typealias Frames = HTTP2RawFrames

    private var frames = HTTP2FrameSplitter()
    private var messages = GRPCMessageReader(maxMessageBytes: 4 << 20)
    /// DATA bytes read since the windows were last topped up.
    private var unacknowledged = 0

    /// Window granted back once this much DATA has been read.
    static let windowRefill = 1 << 20

    /// Everything the client sends first: the preface, SETTINGS opening the streams' windows, the connection's
    /// window opened as far, and the call on stream 1 (HEADERS, then the request in DATA ending the stream).
    static func request(authority: String, streamRequest: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        GRPCMessageReader.writePrefix(length: streamRequest.count, into: &body)
        body += streamRequest
        let headers = Frames.headerBlock([
            (":method", "POST"), (":scheme", "http"), (":path", "/" + V1.CoinWatch.streamPrices.path),
            (":authority", authority), ("content-type", "application/grpc"), ("te", "trailers"),
        ])
        return Frames.preface
            + Frames.settings([(Frames.initialWindowSize, Frames.maxWindow)])
            + Frames.windowUpdate(stream: 0, increment: Frames.maxWindow - 65_535)
            + Frames.frame(Frames.FrameType.headers, flags: Frames.Flag.endHeaders, stream: 1, headers)
            + Frames.frame(Frames.FrameType.data, flags: Frames.Flag.endStream, stream: 1, body)
    }

    override func bytesReceived(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        do throws(HTTP2FrameSplitter.Failure) {
            try frames.feed(bytes) { header, payload in frame(header, payload) }
        } catch {
            fail()
        }
        if messages.failure != nil { fail() }
    }

    private func frame(_ header: HTTP2FrameSplitter.Header, _ payload: UnsafeRawBufferPointer) {
        switch header.type {
        case Frames.FrameType.data:
            var data = payload
            if header.flags & Frames.Flag.padded != 0 {
                guard let padding = payload.first, Int(padding) < payload.count else { return fail() }
                data = UnsafeRawBufferPointer(rebasing: payload[1..<(payload.count - Int(padding))])
            }
            messages.append(data) { message in deliveries.record(message, measuring: phase.current == .measuring) }
            unacknowledged += header.length
            if unacknowledged >= Self.windowRefill {
                connection.enqueue(Frames.windowUpdate(stream: 0, increment: UInt32(unacknowledged))
                    + Frames.windowUpdate(stream: 1, increment: UInt32(unacknowledged)))
                unacknowledged = 0
            }
        case Frames.FrameType.headers where header.flags & Frames.Flag.endStream != 0,
             Frames.FrameType.rstStream, Frames.FrameType.goAway:
            // Trailers or a reset: the server ended the stream, which only the end of the run should do.
            if phase.current != .stopping { failed = true }
        case Frames.FrameType.settings where header.flags & Frames.Flag.ack == 0:
            connection.enqueue(Frames.frame(Frames.FrameType.settings, flags: Frames.Flag.ack, stream: 0))
        case Frames.FrameType.ping where header.flags & Frames.Flag.ack == 0:
            connection.enqueue(Frames.frame(Frames.FrameType.ping, flags: Frames.Flag.ack, stream: 0, Array(payload)))
        default:
            break
        }
    }
}
