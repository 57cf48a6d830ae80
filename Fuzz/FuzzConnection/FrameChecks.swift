import CoinWatchProto
@testable import CoinWatchRPC

/// In-process properties of the framing layer, checked on every input before it goes to a real connection.
enum FrameChecks {
    /// What a decoder made of a whole stream: the frame bodies, then either the error that stopped it or the
    /// number of bytes left buffered.
    struct Outcome: Equatable {
        var frames: [[UInt8]] = []
        var error: FrameError?
        var buffered = 0
    }

    /// Splitting the stream differently must not change what comes out: one read of everything and reads of
    /// `chunk` bytes yield the same frames and the same error. The buffer never exceeds the frame limit.
    static func decoderIsSplitInvariant(_ stream: UnsafeRawBufferPointer, chunk: Int, maxFrameBytes: Int) -> [[UInt8]] {
        let whole = decode(stream, chunk: max(stream.count, 1), maxFrameBytes: maxFrameBytes)
        let split = decode(stream, chunk: chunk, maxFrameBytes: maxFrameBytes)
        guard whole == split else {
            fatalError("FrameDecoder: reads of \(chunk) bytes gave \(split), one read gave \(whole)")
        }
        return whole.frames
    }

    private static func decode(_ stream: UnsafeRawBufferPointer, chunk: Int, maxFrameBytes: Int) -> Outcome {
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        var outcome = Outcome()
        var offset = 0
        reads: while offset < stream.count {
            let end = min(stream.count, offset + chunk)
            var input = UnsafeRawBufferPointer(rebasing: stream[offset..<end])
            offset = end
            while true {
                do {
                    guard let body = try decoder.next(from: &input) else { break }
                    guard !body.isEmpty, body.count <= maxFrameBytes else {
                        fatalError("FrameDecoder returned a body of \(body.count) bytes (limit \(maxFrameBytes))")
                    }
                    outcome.frames.append(Array(body))
                } catch {
                    outcome.error = error
                    // A failed decoder keeps failing with the same error.
                    var rest = UnsafeRawBufferPointer(rebasing: stream[offset...])
                    do {
                        _ = try decoder.next(from: &rest)
                        fatalError("FrameDecoder recovered after \(error)")
                    } catch let again {
                        guard again == error else { fatalError("FrameDecoder failed with \(again) after \(error)") }
                    }
                    break reads
                }
            }
            guard decoder.bufferCapacity <= maxFrameBytes, decoder.bufferedByteCount <= maxFrameBytes else {
                fatalError("FrameDecoder holds \(decoder.bufferedByteCount) bytes in \(decoder.bufferCapacity)")
            }
        }
        if outcome.error == nil { outcome.buffered = decoder.bufferedByteCount }
        return outcome
    }

    /// The zero-copy reader may decline any frame, but a frame it accepts must be valid and mean exactly what the
    /// generated decoder reads from it: the server trusts it instead of that decoder on the hot path.
    static func readerAgreesWithDecoder(_ body: [UInt8]) {
        body.withUnsafeBytes { raw in
            guard let fast = FrameReader.read(raw) else { return }
            let frame: V1.Frame
            do {
                frame = try V1.Frame(serializedBytes: raw, maxBytes: WireLimits.defaultMaxMessageBytes)
            } catch {
                fatalError("FrameReader accepted \(fast) from a frame the decoder rejects: \(error)")
            }
            switch (fast, frame.kind) {
            case let (.call(id, method, timeout, payload), .call(call)?):
                guard call.callID == id, call.method.utf8.elementsEqual(method), call.timeoutMs == timeout,
                      call.payload.elementsEqual(payload), call.metadata.isEmpty else {
                    fatalError("FrameReader read \(fast), the decoder \(call)")
                }
            case let (.message(id, payload), .message(message)?):
                guard message.callID == id, message.payload.elementsEqual(payload) else {
                    fatalError("FrameReader read \(fast), the decoder \(message)")
                }
            case let (.end(id, code, message, payload), .end(end)?):
                let status = end.status ?? V1.Status()
                guard end.callID == id, status.code.rawValue == code, status.message.utf8.elementsEqual(message),
                      end.payload.elementsEqual(payload), end.trailers.isEmpty else {
                    fatalError("FrameReader read \(fast), the decoder \(end)")
                }
            default:
                fatalError("FrameReader read \(fast), the decoder \(String(describing: frame.kind))")
            }
        }
    }
}
