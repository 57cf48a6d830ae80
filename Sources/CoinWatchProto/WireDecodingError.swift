public import CoinWatchCore

/// Why bytes did not decode as a message.
///
/// Carries enough to answer a peer precisely (`INVALID_ARGUMENT` with the message naming the type and the field)
/// without exposing anything of the decoder.
public struct WireDecodingError: CoinWatchError {
    /// The category of the failure. Extensible: new codes may be added, so switch with a default.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// Not a valid protobuf encoding of the type: truncated, a bad tag or varint, a length past the end,
        /// or a known field sent with the wrong wire type.
        public static let malformed = Code("malformed")

        /// A string field (map keys included) is not valid UTF-8, which proto3 requires.
        public static let invalidUTF8 = Code("invalidUTF8")

        /// A string field holds U+0000, which protobuf-c's NUL-terminated strings cannot carry intact.
        public static let embeddedNUL = Code("embeddedNUL")

        /// The input is longer than the decoder was allowed to accept.
        public static let tooLarge = Code("tooLarge")
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
