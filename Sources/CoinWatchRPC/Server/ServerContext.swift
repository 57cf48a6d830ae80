import Synchronization

/// What a handler knows about the call it serves, beyond the request.
public struct ServerContext: Sendable {
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
    /// Set once the call is cancelled, times out, or its connection goes away.
    public let cancellation: CallCancellation

    public init(
        method: String, metadata: [String: String] = [:], deadline: ContinuousClock.Instant? = nil, peer: String = "",
        authToken: String = "", cancellation: CallCancellation = CallCancellation()
    ) {
        self.method = method
        self.metadata = metadata
        self.deadline = deadline
        self.peer = peer
        self.authToken = authToken
        self.cancellation = cancellation
    }

    /// Whether the call has ended from the client's side; long handlers check it.
    public var isCancelled: Bool { cancellation.isCancelled }
}

/// A flag that any thread can read cheaply and that flips once, when a call is
/// cancelled, runs out of time or loses its connection.
public final class CallCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public var isCancelled: Bool { flag.load(ordering: .acquiring) }

    func cancel() { flag.store(true, ordering: .releasing) }
}
