import CoinWatchProto

/// Encoding and decoding for the few small messages of gRPC's standard services (health, reflection), which
/// live outside the `coinwatch.v1` schema and its generated code: the protobuf wire format's varint and
/// length-delimited fields, which is all they use.
enum ProtoFields {
    static func appendVarint(_ field: Int, _ value: UInt64, to bytes: inout [UInt8]) {
        guard value != 0 else { return }
        Varint.append(UInt64(field) << 3, to: &bytes)
        Varint.append(value, to: &bytes)
    }

    static func appendBytes(_ field: Int, _ value: [UInt8], to bytes: inout [UInt8], always: Bool = false) {
        guard always || !value.isEmpty else { return }
        Varint.append(UInt64(field) << 3 | 2, to: &bytes)
        Varint.append(UInt64(value.count), to: &bytes)
        bytes.append(contentsOf: value)
    }

    static func appendString(_ field: Int, _ value: String, to bytes: inout [UInt8]) {
        appendBytes(field, Array(value.utf8), to: &bytes)
    }

    /// A decoded field: its number and its value (a varint, or the bytes of a length-delimited field).
    enum Value {
        case varint(UInt64)
        case bytes(UnsafeRawBufferPointer)
        case other
    }

    /// Calls `visit` for each field of `bytes` in order; throws on malformed input (unknown fields of known
    /// wire types are passed as `.other`, as protobuf requires them to be skipped).
    static func forEach(
        _ bytes: UnsafeRawBufferPointer, _ name: String, _ visit: (Int, Value) throws(WireDecodingError) -> Void
    ) throws(WireDecodingError) {
        var cursor = ProtobufCursor(bytes)
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag(), field > 0 else { throw malformed(name) }
            switch wireType {
            case 0:
                guard let value = cursor.varint() else { throw malformed(name) }
                try visit(field, .varint(value))
            case 1:
                guard cursor.bytes(8) != nil else { throw malformed(name) }
                try visit(field, .other)
            case 2:
                guard let value = cursor.delimited() else { throw malformed(name) }
                try visit(field, .bytes(value))
            case 5:
                guard cursor.bytes(4) != nil else { throw malformed(name) }
                try visit(field, .other)
            default:
                throw malformed(name)
            }
        }
    }

    /// A string field's text; throws for invalid UTF-8.
    static func string(_ bytes: UnsafeRawBufferPointer, _ name: String) throws(WireDecodingError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw WireDecodingError(code: .invalidUTF8, typeName: name, message: "\(name): a string field is not valid UTF-8")
        }
        return text
    }

    static func malformed(_ name: String) -> WireDecodingError {
        WireDecodingError(code: .malformed, typeName: name, message: "\(name): malformed protobuf encoding")
    }
}
