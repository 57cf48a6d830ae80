import Dispatch
import CoinWatchProto
public import CoinWatchPush

/// Device registration for push, and the state of delivery to APNs.
///
/// The registrations live in LevelDB (`push:device:`) and in memory; RegisterDevice and UnregisterDevice are
/// applied by the alert thread, which owns the outbox that delivery drains, and answered once their synced batch
/// is written; GetDevice answers from memory on the event loop. Delivery itself is `PushDelivery` on the alert
/// thread and an `APNsSending` provider (libcurl on a thread of its own); without one, registrations are kept and
/// nothing is sent.
public final class PushService: Sendable {
    public struct Configuration: Sendable {
        /// The provider; nil turns delivery off (registrations are still accepted and kept).
        public var sender: (any APNsSending)?
        /// The APNs environment the provider sends to: only devices registered for it get notifications.
        public var environment: APNsConfiguration.Environment = .production
        /// The apns-topic of devices that registered without one.
        public var defaultTopic = ""
        /// The first retry waits about this long; each further one twice as long, up to `maxBackoff`.
        public var initialBackoff: Duration = .seconds(1)
        public var maxBackoff: Duration = .seconds(300)

        public init() {}
    }

    let worker: AlertWorker
    let registry: DeviceRegistry
    let counters: PushCounters
    let sender: (any APNsSending)?
    /// Where a registration that claims its device stores the claim's record: a synced write (and, in cluster mode,
    /// a round trip to the cluster's store), so never on an event loop; serial, since claims are rare.
    let claimsQueue = DispatchQueue(label: "coinwatch.push.claims")

    init(worker: AlertWorker, registry: DeviceRegistry, counters: PushCounters, sender: (any APNsSending)?) {
        self.worker = worker
        self.registry = registry
        self.counters = counters
        self.sender = sender
    }

    /// Starts the provider, its answers going to the alert thread.
    func start() {
        let worker = self.worker
        sender?.start { responses in worker.post(.pushResponses(responses)) }
    }

    /// Stops the provider; what it had not been answered stays in the outbox for the next start.
    func close() {
        sender?.close()
    }

    public var stats: PushStats {
        let provider = sender?.status
        let devices = registry.counts
        let counts = counters.snapshot
        return PushStats(
            enabled: sender != nil, endpoint: provider?.endpoint ?? "", paused: provider?.paused ?? false,
            pauseReason: provider?.pauseReason ?? "", queued: counts.queued + (provider?.queued ?? 0),
            inFlight: provider?.inFlight ?? 0, delivered: counts.delivered, retried: counts.retried,
            expired: counts.expired, rejected: counts.rejected, registeredDevices: devices.registered,
            disabledDevices: devices.disabled, providerTokens: provider?.tokensIssued ?? 0)
    }

    /// The state as Health/Check reports it.
    var healthState: V1.PushDeliveryState {
        let stats = self.stats
        return V1.PushDeliveryState(
            enabled: stats.enabled, endpoint: stats.endpoint, paused: stats.paused, pauseReason: stats.pauseReason,
            queued: UInt64(stats.queued), inFlight: UInt64(stats.inFlight), delivered: UInt64(stats.delivered),
            retried: UInt64(stats.retried), expired: UInt64(stats.expired), rejected: UInt64(stats.rejected),
            registeredDevices: UInt64(stats.registeredDevices), disabledDevices: UInt64(stats.disabledDevices))
    }
}
