/// The identity of an RPC method: its path on the wire and its message types.
///
/// Generated for every method of the schema's services (e.g. `V1.CoinWatch.getSettings`) so a server's
/// handlers and a client's calls name the same path and types by construction.
public struct WireMethod<Request: WireMessage, Response: WireMessage>: Sendable, Hashable {
    /// The fully qualified method, `package.Service/Method`, as carried by `Call.method`.
    public let path: String

    /// Whether the client sends a stream of requests.
    public let isClientStreaming: Bool

    /// Whether the server answers with a stream of responses.
    public let isServerStreaming: Bool

    /// Whether the schema marks the method `idempotency_level = NO_SIDE_EFFECTS`: it only reads, so HTTP
    /// transports may serve it over GET.
    public let hasNoSideEffects: Bool

    public init(path: String, isClientStreaming: Bool, isServerStreaming: Bool, hasNoSideEffects: Bool = false) {
        self.path = path
        self.isClientStreaming = isClientStreaming
        self.isServerStreaming = isServerStreaming
        self.hasNoSideEffects = hasNoSideEffects
    }
}
