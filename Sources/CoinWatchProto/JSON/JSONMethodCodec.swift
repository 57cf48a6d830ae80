/// A method's requests and responses between the proto3 JSON mapping and the binary encoding.
///
/// Servers dispatch every call on binary requests and responses, whatever the transport; a transport that
/// carries JSON (Connect's `application/json`) turns the request into the binary encoding before dispatch and
/// each response back into JSON, through the message types of the method. Generated for every method
/// (`V1.jsonMethodCodecs`), so no method needs code of its own to speak JSON.
public struct JSONMethodCodec: Sendable {
    /// The fully qualified method, `package.Service/Method`.
    public let path: String
    /// Whether the server answers with a stream of responses.
    public let isServerStreaming: Bool
    /// Whether the method only reads (`idempotency_level = NO_SIDE_EFFECTS`).
    public let hasNoSideEffects: Bool
    private let requestToBinary: @Sendable (UnsafeRawBufferPointer, JSONDecodingOptions) throws(JSONDecodingError) -> [UInt8]
    private let responseToJSON: @Sendable (UnsafeRawBufferPointer, Int) throws(WireDecodingError) -> [UInt8]

    public init<Request: JSONMessage, Response: JSONMessage>(_ method: WireMethod<Request, Response>) {
        path = method.path
        isServerStreaming = method.isServerStreaming
        hasNoSideEffects = method.hasNoSideEffects
        // Every generated message has a table. With it a plain JSON request is encoded as it is read, and a
        // canonical answer written as JSON without decoding it; anything else is decoded whole (WireJSON says
        // when and why).
        let requestSchema = (Request.self as? any WireSchemaDescribed.Type)?.wireSchema
        let responseSchema = (Response.self as? any WireSchemaDescribed.Type)?.wireSchema
        requestToBinary = { bytes, options throws(JSONDecodingError) in
            if let requestSchema, let binary = WireJSON.binary(bytes, schema: requestSchema, options: options) {
                return binary
            }
            return try Request(jsonUTF8: bytes, options: options).serializedBytes()
        }
        responseToJSON = { bytes, maxBytes throws(WireDecodingError) in
            if let responseSchema, bytes.count <= maxBytes, let json = WireJSON.json(bytes, schema: responseSchema) {
                return json
            }
            return try Response(serializedBytes: bytes, maxBytes: maxBytes).jsonUTF8()
        }
    }

    /// The binary encoding of a JSON request.
    public func request(fromJSON json: UnsafeRawBufferPointer, options: JSONDecodingOptions) throws(JSONDecodingError)
        -> [UInt8]
    {
        try requestToBinary(json, options)
    }

    /// The JSON of a binary response (the server's own encoding, so it decodes unless the server is broken).
    public func responseJSON(fromBinary bytes: UnsafeRawBufferPointer, maxBytes: Int = WireLimits.defaultMaxMessageBytes)
        throws(WireDecodingError) -> [UInt8]
    {
        try responseToJSON(bytes, maxBytes)
    }
}
