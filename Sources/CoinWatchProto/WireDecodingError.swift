/// Why bytes did not decode as a message.
///
/// Carries enough to answer a peer precisely (`INVALID_ARGUMENT` with the message naming the type and the field)
/// without exposing anything of the decoder.
public struct WireDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of the failure. Extensible: new codes may be added, so switch with a default.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case malformed, invalidUTF8, embeddedNUL, tooLarge
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// Not a valid protobuf encoding of the type: truncated, a bad tag or varint, a length past the end,
        /// or a known field sent with the wrong wire type.
        public static let malformed = Self(.malformed)

        /// A string field (map keys included) is not valid UTF-8, which proto3 requires.
        public static let invalidUTF8 = Self(.invalidUTF8)

        /// A string field holds U+0000, which protobuf-c's NUL-terminated strings cannot carry intact.
        public static let embeddedNUL = Self(.embeddedNUL)

        /// The input is longer than the decoder was allowed to accept.
        public static let tooLarge = Self(.tooLarge)

        public var description: String {
            switch value {
            case .malformed: "malformed"
            case .invalidUTF8: "invalidUTF8"
            case .embeddedNUL: "embeddedNUL"
            case .tooLarge: "tooLarge"
            }
        }
    }

    /// The category.
    public var code: Code

    /// The fully qualified name of the message being decoded, e.g. `coinwatch.v1.Frame`.
    public var typeName: String

    /// The path of the offending field from `typeName` (e.g. `call.method`), when one is to blame.
    public var fieldPath: String?

    /// A human-readable explanation that names the type and, when known, the field.
    public var message: String

    public init(code: Code, typeName: String, fieldPath: String? = nil, message: String) {
        self.code = code
        self.typeName = typeName
        self.fieldPath = fieldPath
        self.message = message
    }

    public var description: String {
        "\(code): \(message)"
    }
}
