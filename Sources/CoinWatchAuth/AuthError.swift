public import CoinWatchRPC

/// Why a credential operation failed: managing keys or device secrets, or loading them.
///
/// Messages name keys by id and devices by id, never by a secret.
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// A bad argument: an unknown scope, a malformed key id, an invalid device id.
        case invalidArgument
        /// No such key.
        case notFound
        /// The operation conflicts with one in progress (a device being claimed while it is reset).
        case aborted
        /// The store refused or failed a read or write.
        case storeFailure
        /// A stored record does not decode.
        case corruption
        /// No secret can be made now: the system's random source failed.
        case unavailable
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
        switch code {
        case .invalidArgument: RPCError(code: .invalidArgument, message: message)
        case .notFound: RPCError(code: .notFound, message: message)
        case .aborted: RPCError(code: .aborted, message: message)
        case .storeFailure: RPCError(code: .unavailable, message: message)
        case .corruption: RPCError(code: .dataLoss, message: message)
        case .unavailable: RPCError(code: .unavailable, message: message)
        }
    }
}
