import CoinWatchModel
import CoinWatchProto
import Testing
@testable import CoinWatchRPC

/// The fast reader may decline any frame, but a frame it accepts must read
/// exactly as the generated decoder reads it, and no input may crash it.
@Suite("FrameReader")
struct FrameReaderTests {
    static func agreesWithGeneratedDecoder(_ body: [UInt8]) throws -> Bool {
        guard let fast = body.withUnsafeBytes({ bytes in FrameReader.read(bytes).map { Snapshot($0) } }) else { return false }
        let frame = try V1.Frame(serializedBytes: body)
        switch (fast, frame.kind) {
        case (.call(let id, let method, let timeout, let payload), .call(let call)?):
            #expect(call.callID == id && call.method == method && call.timeoutMs == timeout && call.payload == payload)
            #expect(call.metadata.isEmpty)
        case (.message(let id, let payload), .message(let message)?):
            #expect(message.callID == id && message.payload == payload)
        case (.end(let id, let code, let text, let payload), .end(let end)?):
            #expect(end.callID == id && end.payload == payload)
            #expect((end.status?.code.rawValue ?? 0) == code && (end.status?.message ?? "") == text)
            #expect(end.trailers.isEmpty)
        default:
            Issue.record("fast reader and decoder disagree on the kind of \(body)")
        }
        return true
    }

    /// An owned copy of what the reader returned.
    enum Snapshot {
        case call(UInt64, String, UInt64, [UInt8])
        case message(UInt64, [UInt8])
        case end(UInt64, Int32, String, [UInt8])

        init(_ fast: FrameReader.Fast) {
            switch fast {
            case .call(let id, let method, let timeout, let payload):
                self = .call(id, String(decoding: method, as: UTF8.self), timeout, Array(payload))
            case .message(let id, let payload):
                self = .message(id, Array(payload))
            case .end(let id, let code, let message, let payload):
                self = .end(id, code, String(decoding: message, as: UTF8.self), Array(payload))
            }
        }
    }

    @Test("frames from the encoders are read on the fast path and agree with the decoder")
    func encodersAgree() throws {
        let frames: [V1.Frame] = [
            V1.Frame(kind: .call(V1.Call(callID: 9, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 5000, payload: [1, 2, 3]))),
            V1.Frame(kind: .call(V1.Call(callID: 1, method: "a/b"))),
            V1.Frame(kind: .message(V1.Message(callID: UInt64.max, payload: Array(repeating: 7, count: 300)))),
            V1.Frame(kind: .message(V1.Message(callID: 3))),
            V1.Frame(kind: .end(V1.End(callID: 5, status: V1.Status(code: .notFound, message: "no settings for 'é'")))),
            V1.Frame(kind: .end(V1.End(callID: 6, payload: [0x0A, 0x00]))),
        ]
        for frame in frames {
            #expect(try Self.agreesWithGeneratedDecoder(frame.serializedBytes()), "declined \(frame)")
        }
    }

    @Test("frames it must leave to the decoder: metadata, trailers, other kinds, non-ASCII methods, duplicates")
    func declines() throws {
        let declined: [V1.Frame] = [
            V1.Frame(kind: .call(V1.Call(callID: 1, method: "m", metadata: ["k": "v"]))),
            V1.Frame(kind: .end(V1.End(callID: 1, trailers: ["k": "v"]))),
            V1.Frame(kind: .hello(V1.Hello(protocolVersion: 1))),
            V1.Frame(kind: .call(V1.Call(callID: 1, method: "mé"))),
        ]
        for frame in declined {
            #expect(frame.serializedBytes().withUnsafeBytes { FrameReader.read($0) == nil })
        }
        // A field repeated (legal protobuf, last one wins) is left to the decoder.
        let repeated: [UInt8] = [0x22, 0x04, 0x08, 0x01, 0x08, 0x02]
        #expect(repeated.withUnsafeBytes { FrameReader.read($0) == nil })
        #expect(try V1.Frame(serializedBytes: repeated).kind == .message(V1.Message(callID: 2)))
    }

    @Test("100,000 mutated frames: no crash, and every accepted one agrees with the decoder")
    func mutations() async throws {
        var random = SplitMix64(seed: 0xC01)
        let seeds: [[UInt8]] = [
            V1.Frame(kind: .call(V1.Call(callID: 300, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 70, payload: [0x0A, 0x01, 0x41]))).serializedBytes(),
            V1.Frame(kind: .message(V1.Message(callID: 2, payload: [1, 2, 3, 4]))).serializedBytes(),
            V1.Frame(kind: .end(V1.End(callID: 4, status: V1.Status(code: .aborted, message: "x"), payload: [9]))).serializedBytes(),
        ]
        var accepted = 0
        for round in 0..<100_000 {
            if round % 1000 == 0 { await Task.yield() }
            var bytes = seeds[round % seeds.count]
            switch random.next() % 4 {
            case 0: bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            case 1: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(bytes.count + 1)))
            default: bytes = (0..<Int(random.next() % 24)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            guard bytes.withUnsafeBytes({ FrameReader.read($0) != nil }) else { continue }
            // Accepted input must be valid for the decoder too, and read the same.
            if (try? Self.agreesWithGeneratedDecoder(bytes)) == true { accepted += 1 } else {
                Issue.record("fast reader accepted bytes the decoder rejects: \(bytes)")
            }
        }
        #expect(accepted > 1000)
    }

    @Test("isPlainASCII agrees with a byte-by-byte check at every length and position")
    func plainASCII() {
        var random = SplitMix64(seed: 0xA5C11)
        for length in 0..<40 {
            let base = (0..<length).map { _ in UInt8(0x20 + random.next() % 0x5F) }
            #expect(base.withUnsafeBytes { FrameReader.isPlainASCII($0) })
            for index in 0..<length {
                for bad: UInt8 in [0x00, 0x80, 0xC3, 0xFF] {
                    var bytes = base
                    bytes[index] = bad
                    #expect(!bytes.withUnsafeBytes { FrameReader.isPlainASCII($0) }, "\(bytes)")
                }
                var edge = base
                edge[index] = index % 2 == 0 ? 0x01 : 0x7F
                #expect(edge.withUnsafeBytes { FrameReader.isPlainASCII($0) }, "\(edge)")
            }
        }
    }
}
