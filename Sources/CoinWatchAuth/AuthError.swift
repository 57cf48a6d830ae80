public import CoinWatchCore
public import CoinWatchRPC

/// Why a credential operation failed: managing keys or device secrets, or loading them.
///
/// Messages name keys by id and devices by id, never by a secret.
public struct AuthError: CoinWatchError {
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) { self.name = name }

        public var description: String { name }

        /// A bad argument: an unknown scope, a malformed key id, an invalid device id.
        public static let invalidArgument = Code("invalidArgument")
        /// No such key.
        public static let notFound = Code("notFound")
        /// The operation conflicts with one in progress (a device being claimed while it is reset).
        public static let aborted = Code("aborted")
        /// The store refused or failed a read or write.
        public static let storeFailure = Code("storeFailure")
        /// A stored record does not decode.
        public static let corruption = Code("corruption")
        /// No secret can be made now: the system's random source failed.
        public static let unavailable = Code("unavailable")
        /// The device was claimed elsewhere first (another node of the cluster).
        public static let alreadyClaimed = Code("alreadyClaimed")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The status an RPC answers with for this error.
    public var rpcError: RPCError {
        let status: RPCError.Code = switch code {
        case .invalidArgument: .invalidArgument
        case .notFound: .notFound
        case .aborted: .aborted
        case .corruption: .dataLoss
        case .alreadyClaimed: .unauthenticated
        default: .unavailable
        }
        return RPCError(code: status, message: message)
    }
}
