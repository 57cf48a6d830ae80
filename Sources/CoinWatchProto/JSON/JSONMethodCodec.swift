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
        // Converted straight between JSON and the wire where WireJSON can be sure, decoded whole elsewhere.
        let requestSchema = Request.wireSchema
        let responseSchema = Response.wireSchema
        requestToBinary = { bytes, options throws(JSONDecodingError) in
            try Request.binary(fromJSON: bytes, options: options, schema: requestSchema)
        }
        responseToJSON = { bytes, maxBytes throws(WireDecodingError) in
            try Response.json(fromBinary: bytes, maxBytes: maxBytes, schema: responseSchema)
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
