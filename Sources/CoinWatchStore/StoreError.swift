public import CoinWatchCore

/// A failure of the storage layer.
///
/// Callers branch on `code` (a lock conflict is handled differently from corruption) and show `message`, which keeps
/// LevelDB's own wording so an operator can match it against LevelDB's documentation and logs.
public struct StoreError: CoinWatchError {
    /// What kind of failure this is. A struct of constants rather than an enum so new kinds can be added without
    /// breaking exhaustive `switch`es in client code.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The database directory is locked by another open handle, in this process or in another one.
        public static let alreadyInUse = Code("alreadyInUse")
        /// Stored data or metadata failed a consistency check; `Database.repair(path:)` may recover it.
        public static let corruption = Code("corruption")
        /// The operating system refused a file operation (permissions, disk full, ...).
        public static let ioError = Code("ioError")
        /// The database (or a file it needs) does not exist.
        public static let notFound = Code("notFound")
        /// An argument or option was rejected before or by LevelDB.
        public static let invalidArgument = Code("invalidArgument")
        /// LevelDB does not implement the requested operation.
        public static let notSupported = Code("notSupported")
        /// The database handle was closed before or during the call.
        public static let closed = Code("closed")
        /// LevelDB reported something this module does not recognise; the message has the details.
        public static let unknown = Code("unknown")
    }

    /// The kind of failure, for branching.
    public var code: Code
    /// A human-readable explanation; for failures reported by LevelDB it contains LevelDB's message verbatim.
    public var message: String
    /// The file system is full or the quota is used up (`ENOSPC`, `EDQUOT`): retrying soon will not help. Set where
    /// the failure is classified (LevelDB's status, the journal's errno) and kept by errors that wrap it, so callers
    /// branch on it instead of reading the message.
    public var isDiskFull: Bool

    public init(code: Code, message: String, isDiskFull: Bool = false) {
        self.code = code
        self.message = message
        self.isDiskFull = isDiskFull
    }

    public var description: String {
        "\(code): \(message)"
    }
}

extension StoreError {
    static func closed(_ path: String) -> StoreError {
        StoreError(code: .closed, message: "database at \(path) is closed")
    }

    static func invalidArgument(_ message: String) -> StoreError {
        StoreError(code: .invalidArgument, message: message)
    }
}
