import CoinWatchProto
import Testing

/// A message type as a test argument, shown by its protobuf name.
struct MessageType: Sendable, CustomTestStringConvertible {
    let type: any RandomMessage.Type

    var testDescription: String { type.protoName }

    /// Every generated message type.
    static let all = allMessageTypes.map(MessageType.init)

    /// A seed that differs per type but not between runs.
    var seed: UInt64 {
        type.protoName.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }
}

/// Encodes, decodes (from an array and from a sub-range of a larger buffer) and re-encodes `value`.
func expectRoundTrip<M: WireMessage>(_ value: M, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let bytes = value.serializedBytes()
    let decoded = try M(serializedBytes: bytes)
    #expect(decoded == value, sourceLocation: sourceLocation)
    #expect(decoded.serializedBytes() == bytes, "encoding is not deterministic", sourceLocation: sourceLocation)

    var framed: [UInt8] = [0xF0, 0x0D]
    value.serialize(appendingTo: &framed)
    #expect(framed == [0xF0, 0x0D] + bytes, sourceLocation: sourceLocation)

    let padded: [UInt8] = [0xFF] + bytes + [0xFF, 0xFF]
    let fromSlice = try padded.withUnsafeBytes { raw throws(WireDecodingError) in
        try M(serializedBytes: UnsafeRawBufferPointer(rebasing: raw[1..<(1 + bytes.count)]), maxBytes: bytes.count)
    }
    #expect(fromSlice == value, sourceLocation: sourceLocation)
}
