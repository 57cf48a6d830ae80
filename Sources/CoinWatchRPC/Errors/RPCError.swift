public import CoinWatchCore

/// The one error type of CoinWatch calls: a status code and a message.
///
/// Handlers throw it, the runtime maps it once to the wire `Status` of the
/// call's `End` frame, and the client library turns a non-OK `End` back into
/// the same value, so a caller in Swift sees exactly what a caller in any other
/// language sees on the wire.
public struct RPCError: CoinWatchError {
    /// What kind of failure, with gRPC's meaning and numbering.
    public var code: Code
    /// What went wrong, for a person: names the field, the limit or the state.
    public var message: String
    /// The server did not start this call, so sending it again cannot repeat what it does, whatever the method.
    /// Set by the client alone (it is not on the wire): for a call the server's `GoAway` refused (its id above the
    /// last one the server accepted), every call held past the server's call limit when a `GoAway` came or its
    /// connection ended, and a call started on a connection that had already ended or was going away.
    /// `CoinWatchClient` sends such a unary call (within its deadline) or stream again on a new connection, as gRPC
    /// clients retry a stream refused by a `GOAWAY`.
    public var notProcessed = false

    public init(code: Code, message: String) {
        self.code = code
        self.message = Self.bounded(message)
    }

    /// Whether a caller may send the call again on a new connection: the server did not start it (`notProcessed`), and
    /// what ended it was the connection or the server going away (UNAVAILABLE), not a refusal a new connection would
    /// meet too (a failed handshake's version or credential, say). `CoinWatchClient.call` and
    /// `RPCResponseStream.start(startingAgain:)` both go by it.
    public var maySendAgain: Bool { notProcessed && code == .unavailable }

    /// This error, marked `notProcessed`.
    public var asNotProcessed: RPCError {
        var copy = self
        copy.notProcessed = true
        return copy
    }

    public var description: String { "\(code): \(message)" }

    /// The most bytes of UTF-8 a message keeps. Messages quote what was wrong, and what was wrong may be as
    /// large as a frame (a 3 MB metadata key, quoted twice): cut here, an answer always fits the frame limit the
    /// server announced, a gRPC header's limits and a log line.
    public static let maxMessageBytes = 1024

    /// `message`, or its first `maxMessageBytes` bytes (whole characters) and a note of how much was cut.
    public static func bounded(_ message: String) -> String {
        let count = message.utf8.count
        guard count > maxMessageBytes else { return message }
        var kept = Substring(message)
        while kept.utf8.count > maxMessageBytes - 40 { kept = kept.dropLast(max(1, (kept.utf8.count - maxMessageBytes + 40) / 4)) }
        return "\(kept)… (\(count - kept.utf8.count) more bytes cut)"
    }
}

extension RPCError {
    /// gRPC's status codes. An extensible struct rather than a closed enum so a
    /// peer's unknown code survives decoding (it reads as its number).
    public struct Code: ErrorCode {
        public let rawValue: Int32

        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        public static let ok = Code(rawValue: 0)
        public static let cancelled = Code(rawValue: 1)
        public static let unknown = Code(rawValue: 2)
        public static let invalidArgument = Code(rawValue: 3)
        public static let deadlineExceeded = Code(rawValue: 4)
        public static let notFound = Code(rawValue: 5)
        public static let alreadyExists = Code(rawValue: 6)
        public static let permissionDenied = Code(rawValue: 7)
        public static let resourceExhausted = Code(rawValue: 8)
        public static let failedPrecondition = Code(rawValue: 9)
        public static let aborted = Code(rawValue: 10)
        public static let outOfRange = Code(rawValue: 11)
        public static let unimplemented = Code(rawValue: 12)
        public static let `internal` = Code(rawValue: 13)
        public static let unavailable = Code(rawValue: 14)
        public static let dataLoss = Code(rawValue: 15)
        public static let unauthenticated = Code(rawValue: 16)

        static let names = [
            "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
            "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
            "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
        ]

        /// The wire name, `INVALID_ARGUMENT`; `CODE_42` for a number outside gRPC's list.
        public var name: String {
            Self.names.indices.contains(Int(rawValue)) ? Self.names[Int(rawValue)] : "CODE_\(rawValue)"
        }

        public var description: String { name }

        /// Parses a wire name (`not_found` or `NOT_FOUND`).
        public init?(name: String) {
            guard let index = Self.names.firstIndex(of: name.uppercased()) else { return nil }
            self.rawValue = Int32(index)
        }

        /// Codes a client may retry without knowing whether the call took effect.
        public var isRetryable: Bool { self == .unavailable }
    }
}
