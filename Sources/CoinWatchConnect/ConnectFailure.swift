public import CoinWatchRPC

/// A Connect request refused before it reached a method: the status code and message to answer with.
public struct ConnectFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var error: RPCError

    public init(_ code: RPCError.Code, _ message: String) {
        error = RPCError(code: code, message: message)
    }

    public var description: String { error.description }
}
