/// What WireJSON needs to write a field of a WireSchema straight from the wire in the proto3 JSON mapping,
/// generated beside the wire shapes from the same descriptors as the JSONMessage encoders, so the two agree.
extension WireSchema {
    /// A field's JSON name and what its values are.
    struct JSONField: Sendable {
        /// The lowerCamelCase name the canonical encoder writes (an identifier: it needs no escaping), quoted and
        /// followed by its colon, so a key is one piece of output.
        let key: StaticString
        let form: JSONForm
        let cardinality: Cardinality
        /// The field's place in declaration order, the order the canonical encoder writes fields in.
        let position: Int
    }

    /// The proto type behind a wire shape: the wire alone does not say whether a varint is signed, zigzagged, a
    /// bool or an enum, nor whether 8 bytes are signed.
    enum JSONForm: Sendable {
        case int32, sint32, sfixed32
        case int64, sint64, sfixed64
        case uint32, fixed32
        case uint64, fixed64
        case bool
        case string
        case bytes
        /// The enum's name for a number, nil when the schema does not name it (then the number is written).
        case enumeration(@Sendable (Int32) -> StaticString?)
        case message
    }

    /// How many values the field holds and when it is written.
    enum Cardinality: Sendable {
        /// One value, left out of JSON at its default.
        case singular
        /// A message field, written whenever it is present, `{}` when empty.
        case optionalMessage
        /// A list, written as an array when it has elements.
        case repeated
        /// A map: entries on the wire, an object in JSON with its keys sorted.
        case map
        /// A member of the oneof with this index: written whenever it is set, default or not.
        case oneof(Int)
    }
}

/// A message type with a generated WireSchema.
protocol WireSchemaDescribed {
    static var wireSchema: WireSchema { get }
}
