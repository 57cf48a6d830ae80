import Synchronization

/// Push delivery's state for health checks, logs and a metrics collector: a value, safe to read from any thread.
public struct PushStats: Sendable, Hashable {
    /// Whether the server delivers to APNs.
    public var enabled: Bool
    public var endpoint: String
    /// Sending is paused (APNs refused a freshly made provider token); `pauseReason` says why.
    public var paused: Bool
    public var pauseReason: String
    /// Alerts waiting to be sent, retries waiting for their time included.
    public var queued: Int
    /// Alerts handed to the provider and not yet answered.
    public var inFlight: Int
    /// Alerts APNs accepted.
    public var delivered: Int
    /// Sends retried after a 429, a 5xx, a timeout or a dropped connection.
    public var retried: Int
    /// Alerts dropped because they expired before APNs accepted them.
    public var expired: Int
    /// Alerts APNs refused for good.
    public var rejected: Int
    public var registeredDevices: Int
    /// Registered devices whose token APNs refused.
    public var disabledDevices: Int
    /// Provider tokens (JWTs) made since the start: one per refresh period, plus one per refusal.
    public var providerTokens: Int
}

/// Counter changes of one alert-thread round, published once its batch is written (so a reader never sees an
/// alert counted as delivered whose outbox entry a crash could bring back).
struct PushCounts {
    var delivered = 0
    var retried = 0
    var expired = 0
    var rejected = 0
}

/// The atomics behind `PushStats`.
final class PushCounters: Sendable {
    let delivered = Atomic<Int>(0)
    let retried = Atomic<Int>(0)
    let expired = Atomic<Int>(0)
    let rejected = Atomic<Int>(0)
    /// Keys waiting on the alert thread (queued and waiting for a retry).
    let queued = Atomic<Int>(0)

    func record(_ counts: PushCounts) {
        if counts.delivered > 0 { delivered.add(counts.delivered, ordering: .relaxed) }
        if counts.retried > 0 { retried.add(counts.retried, ordering: .relaxed) }
        if counts.expired > 0 { expired.add(counts.expired, ordering: .relaxed) }
        if counts.rejected > 0 { rejected.add(counts.rejected, ordering: .relaxed) }
    }

    func setQueued(_ count: Int) {
        queued.store(count, ordering: .relaxed)
    }

    var snapshot: (queued: Int, delivered: Int, retried: Int, expired: Int, rejected: Int) {
        (queued.load(ordering: .relaxed), delivered.load(ordering: .relaxed), retried.load(ordering: .relaxed),
         expired.load(ordering: .relaxed), rejected.load(ordering: .relaxed))
    }
}
