/// A protobuf message of the CoinWatch schema that can cross the wire.
///
/// Every generated message type conforms. Encoding and decoding run through protobuf-c, the reference C
/// implementation the server links anyway, so Swift and C peers share one parser; a validation pass on top
/// adds what protobuf-c leaves out (UTF-8 and NUL checks on strings).
public protocol WireMessage: Sendable, Hashable {
    /// A message with every field at its default, as an empty encoding decodes.
    init()

    /// Decodes untrusted bytes, at most `WireLimits.defaultMaxMessageBytes` of them.
    init(serializedBytes: [UInt8]) throws(WireDecodingError)

    /// Decodes untrusted bytes in place (no copy of the input), refusing more than `maxBytes` of them.
    ///
    /// Unknown fields are skipped, as protobuf requires; malformed input, invalid UTF-8 or an embedded NUL
    /// in a string field throw. The bytes are only read during the call.
    init(serializedBytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError)

    /// The deterministic encoding: fields in number order, map entries sorted by key.
    ///
    /// protobuf-c stores strings NUL-terminated, so a string holding U+0000 is cut at that point. Decoding
    /// rejects such strings, so values that came off the wire never hold one.
    func serializedBytes() -> [UInt8]

    /// Appends the encoding to `buffer`, e.g. after a frame header, without an intermediate array.
    func serialize(appendingTo buffer: inout [UInt8])

    /// The fully qualified protobuf name, e.g. `coinwatch.v1.Frame`.
    static var protoName: String { get }
}

extension WireMessage {
    public init(serializedBytes bytes: [UInt8]) throws(WireDecodingError) {
        try self.init(serializedBytes: bytes, maxBytes: WireLimits.defaultMaxMessageBytes)
    }

    /// Decodes untrusted bytes, refusing more than `maxBytes` of them.
    public init(serializedBytes bytes: [UInt8], maxBytes: Int) throws(WireDecodingError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(WireDecodingError) in try Self(serializedBytes: buffer, maxBytes: maxBytes) }
        }
        self = try result.get()
    }

    /// Decodes untrusted bytes, refusing more than `maxBytes` of them.
    public init(serializedBytes bytes: ArraySlice<UInt8>, maxBytes: Int = WireLimits.defaultMaxMessageBytes)
        throws(WireDecodingError)
    {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(WireDecodingError) in try Self(serializedBytes: buffer, maxBytes: maxBytes) }
        }
        self = try result.get()
    }
}

extension WireMessage {
    /// Decodes untrusted bytes in place, at most `WireLimits.defaultMaxMessageBytes` of them.
    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(WireDecodingError) {
        try self.init(serializedBytes: bytes, maxBytes: WireLimits.defaultMaxMessageBytes)
    }
}
