import CoinWatchProto
import Testing
@testable import CoinWatchRPC

/// The hand-written envelope writers must produce exactly what the generated
/// (protobuf-c) decoder reads back, for every size class of their varints.
@Suite("FrameEnvelope")
struct FrameEnvelopeTests {
    static let callIDs: [UInt64] = [1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), UInt64.max]
    static let payloadSizes = [0, 1, 127, 128, 300, 70_000]

    @Test("End frames decode to the same End", arguments: callIDs)
    func end(callID: UInt64) throws {
        for size in Self.payloadSizes {
            for (code, message) in [(Int32(0), ""), (5, "no settings for device 'é'"), (16, "")] {
                let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
                let length = FrameEnvelope.endFrameSize(callID: callID, code: code, message: message, payloadCount: size)
                var body = [UInt8](repeating: 0, count: length)
                body.withUnsafeMutableBytes { buffer in
                    payload.withUnsafeBytes {
                        FrameEnvelope.writeEndFrame(into: buffer, callID: callID, code: code, message: message, payload: $0)
                    }
                }
                let frame = try V1.Frame(serializedBytes: body)
                let end = try #require(frame.end)
                #expect(end.callID == callID)
                #expect(end.payload == payload)
                #expect((end.status?.code ?? .ok).rawValue == code)
                #expect((end.status?.message ?? "") == message)
            }
        }
    }

    @Test("Message envelopes around a shared payload and a per-call suffix decode as one merged message", arguments: callIDs)
    func message(callID: UInt64) throws {
        let update = V1.PriceUpdate(symbol: "BTC", price: V1.Decimal(mantissa: 642_505, scale: 1), sourceTimeMs: 1_700_000_000_000)
        let shared = update.serializedBytes()
        let suffix = V1.PriceUpdate(sequence: 42).serializedBytes()
        let envelopeSize = FrameEnvelope.messageEnvelopeSize(callID: callID, payloadCount: shared.count + suffix.count)
        var body = [UInt8](repeating: 0, count: envelopeSize)
        body.withUnsafeMutableBytes { buffer in
            _ = FrameEnvelope.writeMessageEnvelope(into: buffer, callID: callID, payloadCount: shared.count + suffix.count)
        }
        body += shared + suffix
        let frame = try V1.Frame(serializedBytes: body)
        guard case .message(let message) = frame.kind else {
            Issue.record("not a Message frame: \(frame)")
            return
        }
        #expect(message.callID == callID)
        var expected = update
        expected.sequence = 42
        #expect(try V1.PriceUpdate(serializedBytes: message.payload) == expected)
    }

    @Test("Call frames decode to the same Call", arguments: callIDs)
    func call(callID: UInt64) throws {
        for size in Self.payloadSizes {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let metadata = [("authorization", "secret"), ("request-id", ""), ("x", "ünïcode")]
            let length = FrameEnvelope.callFrameSize(
                callID: callID, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 1500, metadata: metadata,
                payloadCount: size)
            var body = [UInt8](repeating: 0, count: length)
            body.withUnsafeMutableBytes { buffer in
                payload.withUnsafeBytes {
                    FrameEnvelope.writeCallFrame(
                        into: buffer, callID: callID, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 1500,
                        metadata: metadata, payload: $0)
                }
            }
            let frame = try V1.Frame(serializedBytes: body)
            guard case .call(let call) = frame.kind else {
                Issue.record("not a Call frame")
                return
            }
            #expect(call == V1.Call(
                callID: callID, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 1500,
                metadata: ["authorization": "secret", "request-id": "", "x": "ünïcode"], payload: payload))
        }
    }
}
