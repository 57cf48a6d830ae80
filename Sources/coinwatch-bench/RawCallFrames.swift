import CoinWatchProto
import CoinWatchRPC

/// `Call` frames encoded ahead of time, so issuing a call costs a varint and a copy.
///
/// A load generator, like `redis-benchmark` with its pre-encoded commands: every
/// field of `Frame{call: Call{call_id, method, payload}}` but the call id is the
/// same for all calls with one payload, so those bytes (the "tail") are built once
/// and only the id is written per call. Field numbers are the runtime's `FrameField`;
/// `init` checks one encoding against the generated decoder.
struct RawCallFrames {
    /// Per payload: `Call.method` and `Call.payload`, tag and length included.
    private let tails: [[UInt8]]

    static let frameCallTag = UInt8(FrameField.call << 3 | 2)
    static let callIDTag = UInt8(FrameField.Call.callID << 3 | 0)
    static let methodTag = UInt8(FrameField.Call.method << 3 | 2)
    static let payloadTag = UInt8(FrameField.Call.payload << 3 | 2)

    init(method: String, payloads: [[UInt8]]) throws(RPCError) {
        let methodBytes = Array(method.utf8)
        tails = payloads.map { payload in
            var tail: [UInt8] = [Self.methodTag]
            Varint.append(UInt64(methodBytes.count), to: &tail)
            tail += methodBytes
            if !payload.isEmpty {
                tail.append(Self.payloadTag)
                Varint.append(UInt64(payload.count), to: &tail)
                tail += payload
            }
            return tail
        }
        try check(method: method, payload: payloads.first ?? [])
    }

    var count: Int { tails.count }

    /// Bytes of the frame body for call `id` with payload `index`.
    func bodySize(id: UInt64, payload index: Int) -> Int {
        let inner = 1 + Varint.size(id) + tails[index].count
        return 1 + Varint.size(UInt64(inner)) + inner
    }

    /// Writes the frame body for call `id` with payload `index`; `buffer` holds exactly `bodySize` bytes.
    func write(id: UInt64, payload index: Int, into buffer: UnsafeMutableRawBufferPointer) {
        tails[index].withUnsafeBytes { tail in
            let inner = 1 + Varint.size(id) + tail.count
            var out = buffer.baseAddress!
            out.storeBytes(of: Self.frameCallTag, as: UInt8.self)
            out += 1
            Varint.write(UInt64(inner), to: &out)
            out.storeBytes(of: Self.callIDTag, as: UInt8.self)
            out += 1
            Varint.write(id, to: &out)
            out.copyMemory(from: tail.baseAddress!, byteCount: tail.count)
            precondition(out + tail.count == buffer.baseAddress! + buffer.count, "Call frame size mismatch")
        }
    }

    /// Decodes a frame written here with the generated decoder: a wrong field number
    /// or length would otherwise show up only as server errors.
    private func check(method: String, payload: [UInt8]) throws(RPCError) {
        guard !tails.isEmpty else { return }
        let id: UInt64 = 300
        var body = [UInt8](repeating: 0, count: bodySize(id: id, payload: 0))
        body.withUnsafeMutableBytes { write(id: id, payload: 0, into: $0) }
        let expected = V1.Frame(kind: .call(V1.Call(callID: id, method: method, payload: payload)))
        guard let frame = try? V1.Frame(serializedBytes: body), frame == expected else {
            throw RPCError(code: .internal, message: "the pre-encoded Call frame does not decode as \(expected)")
        }
    }
}
