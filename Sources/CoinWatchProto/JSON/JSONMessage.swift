/// A message with the proto3 JSON mapping (protobuf's "ProtoJSON"), generated for every message of the schema.
///
/// Output follows the mapping's canonical form: fields under their lowerCamelCase JSON names, fields at their
/// default value left out (oneof members excepted: a set member is always written), 64-bit integers as strings,
/// enums by name (by number when the schema does not name the value), `bytes` as padded standard base64, map
/// entries sorted by key so output is deterministic.
///
/// Input accepts everything the mapping allows: either name of a field (the JSON name or the `.proto` name),
/// integers as numbers or strings (exponent and fraction allowed when the value is a whole number: `1e3`,
/// `"2.0"`), enums by name or number, standard or URL-safe base64 with or without padding, and `null` for "the
/// default" wherever a field stands. Unknown fields are rejected unless the options say to ignore them (the
/// mapping's rule); a field given twice (under either name) or two members of one oneof are rejected.
public protocol JSONMessage: WireMessage {
    /// Decodes from a parsed document; the value must be an object.
    init(jsonValue: JSONValue, options: JSONDecodingOptions) throws(JSONDecodingError)

    /// Writes the canonical JSON object.
    func writeJSON(to writer: inout JSONWriter)
}

/// How lenient a JSON decode is, and how much it may cost.
public struct JSONDecodingOptions: Sendable, Hashable {
    /// Skip members that name no field, and enum names this build does not know, instead of failing. Servers
    /// turn this on for requests so that a newer client's additions do not break an older server, as the binary
    /// encoding allows; the default is the mapping's strict rule.
    public var ignoreUnknownFields: Bool

    /// The most bytes a document may have.
    public var maxBytes: Int

    /// How deep values may nest: one inside more arrays and objects than this is refused (ignored members
    /// included; see `JSONReader.Options.maxDepth`).
    public var maxDepth: Int

    public init(
        ignoreUnknownFields: Bool = false, maxBytes: Int = WireLimits.defaultMaxMessageBytes, maxDepth: Int = 64
    ) {
        self.ignoreUnknownFields = ignoreUnknownFields
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }
}

extension JSONMessage {
    /// Decodes an untrusted UTF-8 JSON document in place.
    public init(jsonUTF8 bytes: UnsafeRawBufferPointer, options: JSONDecodingOptions = .init())
        throws(JSONDecodingError)
    {
        guard bytes.count <= options.maxBytes else {
            throw JSONDecodingError(
                code: .tooLarge, typeName: Self.protoName,
                detail: "\(bytes.count) bytes exceed the limit of \(options.maxBytes)"
            )
        }
        do {
            let value = try JSONValue(parsing: bytes, options: .strict(maxDepth: options.maxDepth))
            try self.init(jsonValue: value, options: options)
        } catch {
            var located = error
            located.typeName = Self.protoName
            throw located
        }
    }

    /// Decodes an untrusted UTF-8 JSON document.
    public init(jsonUTF8 bytes: [UInt8], options: JSONDecodingOptions = .init()) throws(JSONDecodingError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONDecodingError) in try Self(jsonUTF8: buffer, options: options) }
        }
        self = try result.get()
    }

    /// Decodes an untrusted UTF-8 JSON document from part of a larger buffer.
    public init(jsonUTF8 bytes: ArraySlice<UInt8>, options: JSONDecodingOptions = .init()) throws(JSONDecodingError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONDecodingError) in try Self(jsonUTF8: buffer, options: options) }
        }
        self = try result.get()
    }

    /// Decodes a JSON document held in a string.
    public init(jsonString: String, options: JSONDecodingOptions = .init()) throws(JSONDecodingError) {
        try self.init(jsonUTF8: Array(jsonString.utf8), options: options)
    }

    /// The binary encoding of an untrusted UTF-8 JSON document: what `init(jsonUTF8:options:)` then
    /// `serializedBytes()` give, and the same error, without the value in between for a plain document (one
    /// encoded as it is read; `WireJSON+Binary.swift` says which).
    public static func binary(fromJSON bytes: UnsafeRawBufferPointer, options: JSONDecodingOptions = .init())
        throws(JSONDecodingError) -> [UInt8]
    {
        try binary(fromJSON: bytes, options: options, schema: wireSchema)
    }

    /// The canonical JSON of an encoding: what `init(serializedBytes:maxBytes:)` then `jsonUTF8()` give, and the
    /// same error, written straight from the bytes when they are canonical (`WireJSON.swift` says when).
    public static func json(fromBinary bytes: UnsafeRawBufferPointer, maxBytes: Int = WireLimits.defaultMaxMessageBytes)
        throws(WireDecodingError) -> [UInt8]
    {
        try json(fromBinary: bytes, maxBytes: maxBytes, schema: wireSchema)
    }

    /// The generated table of the type (every generated message has one), found once by a caller that converts
    /// many messages (JSONMethodCodec).
    static var wireSchema: WireSchema? { (Self.self as? any WireSchemaDescribed.Type)?.wireSchema }

    static func binary(fromJSON bytes: UnsafeRawBufferPointer, options: JSONDecodingOptions, schema: WireSchema?)
        throws(JSONDecodingError) -> [UInt8]
    {
        if let schema, let binary = WireJSON.binary(bytes, schema: schema, options: options) { return binary }
        return try Self(jsonUTF8: bytes, options: options).serializedBytes()
    }

    static func json(fromBinary bytes: UnsafeRawBufferPointer, maxBytes: Int, schema: WireSchema?)
        throws(WireDecodingError) -> [UInt8]
    {
        if bytes.count <= maxBytes, let schema, let json = WireJSON.json(bytes, schema: schema) { return json }
        return try Self(serializedBytes: bytes, maxBytes: maxBytes).jsonUTF8()
    }

    /// The canonical JSON encoding, as UTF-8.
    public func jsonUTF8() -> [UInt8] {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.bytes
    }

    /// The canonical JSON encoding.
    public func jsonString() -> String {
        String(decoding: jsonUTF8(), as: UTF8.self)
    }
}

/// An enum with the proto3 JSON mapping: its values by name.
public protocol JSONEnum: RawRepresentable<Int32>, Sendable {
    /// The value the schema names `name` (e.g. `DIRECTION_ABOVE`); nil for a name it does not have.
    static func named(_ name: String) -> Self?

    /// The schema's name for the value; nil for a number the schema does not name.
    var protoValueName: StaticString? { get }
}

extension JSONWriter {
    /// An enum value by name, or by number when the schema does not name it.
    public mutating func enumValue<E: JSONEnum>(_ value: E) {
        if let name = value.protoValueName {
            schemaName(name)
        } else {
            number(value.rawValue)
        }
    }
}
