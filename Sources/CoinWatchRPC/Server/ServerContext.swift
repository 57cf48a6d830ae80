import Synchronization

/// What a handler knows about the call it serves, beyond the request.
///
/// A class, created once per call: handlers, responders and writers pass it
/// around by reference, so the call's strings and metadata are retained once
/// rather than on every copy.
public final class ServerContext: Sendable {
    /// The method path, e.g. `coinwatch.v1.CoinWatch/GetSettings`.
    public let method: String
    /// The call's metadata, as sent in `Call.metadata`.
    public let metadata: [String: String]
    /// When the call must be done by; `nil` when the client set no deadline.
    public let deadline: ContinuousClock.Instant?
    /// The peer's address, for logs.
    public let peer: String
    /// The token the client sent in its `Hello`, empty if none.
    public let authToken: String
    private let cancelled = Atomic<Bool>(false)

    public init(
        method: String, metadata: [String: String] = [:], deadline: ContinuousClock.Instant? = nil, peer: String = "",
        authToken: String = ""
    ) {
        self.method = method
        self.metadata = metadata
        self.deadline = deadline
        self.peer = peer
        self.authToken = authToken
    }

    /// Set once the call is cancelled, times out, or its connection goes away;
    /// long handlers check it. Any thread, cheap.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}
