public import CoinWatchCore

/// Why a feed could not be set up: a bad `--feed` text or venue URL, or a replay file that cannot be used.
public struct FeedError: CoinWatchError {
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The feed text does not follow `FeedSpec.syntax`, or a feed option is wrong.
        public static let invalidSpec = Code("invalid_spec")

        /// A venue URL that is not `ws://…` or `wss://…`.
        public static let invalidURL = Code("invalid_url")

        /// The TLS settings for `wss://` venues cannot be used (a CA file that is not PEM).
        public static let tlsSetup = Code("tls_setup")

        /// The replay file cannot be read.
        public static let unreadable = Code("unreadable")

        /// The replay file is larger than a replay may load.
        public static let tooLarge = Code("too_large")

        /// The replay file holds no usable tick.
        public static let empty = Code("empty")
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
