/// Why a feed could not be set up: a bad `--feed` text or URL, or a replay file that cannot be used.
public struct FeedError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        /// The feed text does not follow `FeedSpec.syntax`.
        public static let invalidSpec = Code(name: "invalid_spec")
        /// A venue URL that is not `ws://…` or `wss://…`.
        public static let invalidURL = Code(name: "invalid_url")
        /// The replay file cannot be read.
        public static let unreadable = Code(name: "unreadable")
        /// The replay file is larger than a replay may load.
        public static let tooLarge = Code(name: "too_large")
        /// The replay file holds no usable tick.
        public static let empty = Code(name: "empty")

        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
