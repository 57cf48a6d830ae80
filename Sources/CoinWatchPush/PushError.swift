public import CoinWatchCore

/// A failure of the APNs provider that its caller must act on: a configuration it cannot use, or libcurl
/// refusing to start.
///
/// Failures of single notifications are not errors: they come back as `APNsResponse` outcomes, since the caller
/// decides per notification whether to retry, drop or disable the device.
public struct PushError: CoinWatchError {
    /// What kind of failure this is; a struct of constants so kinds can be added without breaking `switch`es.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// A setting is missing, malformed or out of range; the message names it.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The signing key cannot be read or is not an ES256 (P-256) key.
        public static let keyUnusable = Code("keyUnusable")
        /// libcurl failed to initialise or refused an option this build relies on (HTTP/2 multiplexing, say).
        public static let libraryFailure = Code("libraryFailure")

        public var description: String { name }
    }

    public var code: Code
    /// What went wrong, for operators. Never contains the key or a token.
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
