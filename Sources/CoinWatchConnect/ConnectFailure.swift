public import CoinWatchCore
public import CoinWatchRPC

/// A Connect request refused before it reached a method: the status code and message to answer with.
public struct ConnectFailure: CoinWatchError {
    public var error: RPCError

    /// The status to answer with.
    public var code: RPCError.Code { error.code }
    public var message: String { error.message }

    public init(_ code: RPCError.Code, _ message: String) {
        error = RPCError(code: code, message: message)
    }

    public var description: String { error.description }
}
