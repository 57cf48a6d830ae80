/// What the delivery scheduler needs from a provider: take notifications, answer each one once, say whether it is
/// paused. `APNsClient` is the real one; tests of the scheduler use a fake.
public protocol APNsSending: Sendable {
    /// Starts sending; `onResponses` is called (from the provider's own thread) with every answer, in batches.
    func start(onResponses: @escaping @Sendable ([APNsResponse]) -> Void)
    /// Queues notifications; each gets exactly one response unless the provider is closed first.
    func send(_ requests: [APNsRequest])
    /// How many notifications the provider can have on their way at once; a caller keeps about this many queued.
    var capacity: Int { get }
    var status: APNsStatus { get }
    /// Stops; notifications not yet answered get no response (their caller still holds them).
    func close()
}

/// A provider's state as health reports show it.
public struct APNsStatus: Sendable, Hashable {
    public var endpoint: String
    /// Notifications accepted by `send` and not yet started.
    public var queued: Int
    /// Notifications sent (or being sent) and not yet answered.
    public var inFlight: Int
    /// Sending is paused: APNs refused a freshly made provider token.
    public var paused: Bool
    /// Why, in words for operators; empty while not paused.
    public var pauseReason: String
    /// Provider tokens made since the start.
    public var tokensIssued: Int

    public init(endpoint: String, queued: Int = 0, inFlight: Int = 0, paused: Bool = false, pauseReason: String = "",
                tokensIssued: Int = 0) {
        self.endpoint = endpoint
        self.queued = queued
        self.inFlight = inFlight
        self.paused = paused
        self.pauseReason = pauseReason
        self.tokensIssued = tokensIssued
    }
}
