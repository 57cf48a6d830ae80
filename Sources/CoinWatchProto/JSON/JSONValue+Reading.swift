extension JSONValue {
    /// Parses one untrusted JSON document (UTF-8), numbers kept as text: RFC 8259 to the letter unless `options`
    /// say otherwise. Errors are `syntax` (or `tooDeep`) with the byte offset.
    public init(parsing bytes: UnsafeRawBufferPointer, options: JSONReader.Options) throws(JSONDecodingError) {
        do {
            self = try JSONReader.read(bytes, options: options) { (reader) throws(JSONSyntaxError) in
                try JSONValue(reading: &reader)
            }
        } catch {
            throw JSONDecodingError(error)
        }
    }

    /// Parses one untrusted JSON document strictly (RFC 8259, UTF-8), numbers kept as text.
    public init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = 64) throws(JSONDecodingError) {
        try self.init(parsing: bytes, options: .strict(maxDepth: maxDepth))
    }

    /// The value at the reader's cursor, as a tree: what the generated proto3 JSON decoders take.
    public init(reading reader: inout JSONReader) throws(JSONSyntaxError) {
        switch reader.current {
        case UInt8(ascii: "["):
            var elements: [JSONValue] = []
            try reader.array { (reader, _) throws(JSONSyntaxError) in elements.append(try JSONValue(reading: &reader)) }
            self = .array(elements)
        case UInt8(ascii: "{"):
            var members: [JSONMember] = []
            try reader.object { (reader, key) throws(JSONSyntaxError) in
                members.append(JSONMember(key: key.string, value: try JSONValue(reading: &reader)))
            }
            self = .object(members)
        default:
            switch try reader.token() {
            case .string(let text): self = .string(text.string)
            case .number(let bytes): self = .number(String(decoding: bytes, as: UTF8.self))
            case .bool(let value): self = .bool(value)
            case .null: self = .null
            case .object, .array: preconditionFailure("arrays and objects are read above")
            }
        }
    }
}

extension JSONDecodingError {
    /// A document that is not JSON: located by its byte offset, the type to be named by the caller.
    init(_ error: JSONSyntaxError) {
        self.init(code: error.code, typeName: "", detail: "invalid JSON at byte \(error.offset): \(error.reason)")
    }
}
