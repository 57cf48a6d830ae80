import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchPush
import Foundation

/// Delivers the outbox to APNs: which entries to send and when, and what each answer does to the outbox and to
/// the device's registration. Lives on the alert thread, which owns the outbox, so an entry, the alert that
/// replaces it and the answer about it are never seen out of order.
///
/// The rules (docs/PUSH.md):
/// - An entry of a device with an active registration of the server's environment is sent once the round that
///   wrote it is in LevelDB (so a crash cannot make the engine fire, and send, the same crossing again), and
///   leaves the outbox only after APNs accepted it (200) or refused it for good. A StreamAlerts delivery does not
///   remove such an entry: the phone is the recipient.
/// - The queue holds outbox keys, not alerts: a send reads the key's current entry, so an alert replaced before
///   it went out is never sent, and one replaced while in flight is followed by its replacement.
/// - 429, 5xx, timeouts and dropped connections are retried after a capped exponential backoff with jitter; a
///   retry joins the queue's tail, behind newer work, and none is scheduled past the alert's expiry: an entry
///   that would be is dropped and counted as expired.
/// - 410 Unregistered, 400 BadDeviceToken and DeviceTokenNotForTopic disable the device (with the reason and the
///   time) until it registers again; other refusals drop the entry alone.
final class PushDelivery {
    struct Configuration: Sendable {
        /// The first retry waits about this long (between half of it and all of it).
        var initialBackoff: Duration = .seconds(1)
        /// No retry waits longer than this.
        var maxBackoff: Duration = .seconds(300)
    }

    /// The outbox key under way and what is known about it.
    private struct Tracked {
        enum Phase {
            case ready
            case inFlight(alertID: String, token: String, expiresAtMs: Int64)
            case waiting
        }

        var device: DeviceID
        var phase: Phase
        /// Failed sends of the current alert so far.
        var attempts: Int
    }

    let sender: (any APNsSending)?
    let environment: APNsConfiguration.Environment
    let defaultTopic: String
    let registry: DeviceRegistry
    let counters = PushCounters()
    private let configuration: Configuration
    private let outboxExpiryMs: Int64
    let logger: Logger
    private var tracked: [[UInt8]: Tracked] = [:]
    private var ready = FIFOQueue<[UInt8]>()
    private var retries = RetrySchedule()
    private var inFlight = 0
    /// Keep about twice what the provider can have in flight handed to it, so it never waits for this thread.
    private let window: Int
    private var generator = SystemRandomNumberGenerator()

    init(sender: (any APNsSending)?, environment: APNsConfiguration.Environment, defaultTopic: String,
         registry: DeviceRegistry, configuration: Configuration, outboxExpiry: Duration, logger: Logger) {
        self.sender = sender
        self.environment = environment
        self.defaultTopic = defaultTopic
        self.registry = registry
        self.configuration = configuration
        outboxExpiryMs = outboxExpiry.inMilliseconds
        self.logger = logger
        window = max(1, (sender?.capacity ?? 0) * 2)
    }

    var isOn: Bool { sender != nil }

    /// The device's registration as of this point of the round.
    func registration(_ device: DeviceID, _ round: AlertWorker.Round) -> V1.DeviceRegistration? {
        if let staged = round.registrations[device] { return staged }
        return registry[device]
    }

    /// Whether the outbox entries of `device` are APNs's to deliver (and so to remove).
    func owns(_ device: DeviceID, _ round: AlertWorker.Round) -> Bool {
        guard isOn, let registration = registration(device, round) else { return false }
        return registration.status == .active && registration.environment.apns == environment
    }

    // MARK: Outbox changes

    /// An alert was written to the outbox under `key`.
    func alertWritten(key: [UInt8], device: DeviceID, _ round: AlertWorker.Round) {
        guard owns(device, round) else { return }
        track(key, device)
    }

    /// Queues `key` unless it is already under way (a send reads the newest entry anyway).
    private func track(_ key: [UInt8], _ device: DeviceID) {
        guard tracked[key] == nil else { return }
        tracked[key] = Tracked(device: device, phase: .ready, attempts: 0)
        ready.append(key)
    }

    /// The sweep dropped the expired entry under `key`; if it was waiting here, it counts as expired.
    func outboxEntryExpired(_ key: [UInt8], _ round: inout AlertWorker.Round) {
        guard let entry = tracked[key] else { return }
        if case .inFlight = entry.phase { return }
        tracked.removeValue(forKey: key)
        round.pushCounts.expired += 1
    }

    /// Queues every outbox entry of `device` (a registration made or renewed).
    func trackOutbox(of device: DeviceID, keys: [[UInt8]], _ round: AlertWorker.Round) {
        guard owns(device, round) else { return }
        for key in keys { track(key, device) }
    }

    // MARK: Sending

    /// Takes the due retries and as many queued keys as the window allows, and builds their requests into the
    /// round; they are sent once the round is in LevelDB. Entries found expired are deleted in the round.
    func prepare(_ round: inout AlertWorker.Round, nowMs: Int64, read: ([UInt8], AlertWorker.Round) -> V1.Alert?) {
        guard isOn else { return }
        for key in retries.popDue(now: MonotonicClock.nanoseconds()) {
            guard var entry = tracked[key], case .waiting = entry.phase else { continue }
            entry.phase = .ready
            tracked[key] = entry
            ready.append(key)
        }
        while inFlight < window, let key = ready.popFirst() {
            guard var entry = tracked[key], case .ready = entry.phase else { continue }
            guard let alert = read(key, round), let registration = registration(entry.device, round),
                  registration.status == .active, registration.environment.apns == environment
            else {
                tracked.removeValue(forKey: key)
                continue
            }
            // The apns-expiration second: the alert is not sent from its start on, so no send is ever later than
            // the expiration it carries.
            let expiresAtMs = (alert.timeMs + outboxExpiryMs) / 1000 * 1000
            guard nowMs < expiresAtMs else {
                round.outbox[key] = .some(nil)
                round.pushCounts.expired += 1
                tracked.removeValue(forKey: key)
                continue
            }
            let request = APNsRequest(
                apnsID: Self.apnsID(alertID: alert.id), deviceToken: registration.apnsToken,
                topic: registration.topic.isEmpty ? defaultTopic : registration.topic,
                payload: Array(alert.apnsPayloadJSON.utf8),
                collapseID: alert.apnsCollapseID.isEmpty || alert.apnsCollapseID.utf8.count > APNsRequest.maxCollapseIDBytes
                    ? nil : alert.apnsCollapseID,
                expiration: expiresAtMs / 1000, tag: key)
            entry.phase = .inFlight(alertID: alert.id, token: registration.apnsToken, expiresAtMs: expiresAtMs)
            tracked[key] = entry
            inFlight += 1
            round.pushRequests.append(request)
        }
    }

    /// After the round's batch was written: hands its requests to the provider and publishes the counters.
    func committed(_ round: inout AlertWorker.Round) {
        counters.record(round.pushCounts)
        counters.setQueued(ready.count + retries.count)
        if !round.pushRequests.isEmpty {
            sender?.send(round.pushRequests)
            round.pushRequests = []
        }
    }

    /// When the earliest retry is due (`MonotonicClock` nanoseconds), for the alert thread's sleep.
    var nextRetry: Int64? { retries.earliest }

    // MARK: Answers

    func handle(_ responses: [APNsResponse], _ round: inout AlertWorker.Round, nowMs: Int64,
                read: ([UInt8], AlertWorker.Round) -> V1.Alert?) {
        for response in responses {
            let key = response.request.tag
            guard var entry = tracked[key], case .inFlight(let alertID, let token, let expiresAtMs) = entry.phase else {
                continue
            }
            inFlight -= 1
            let current = read(key, round)
            let isCurrent = current?.id == alertID
            switch response.outcome {
            case .delivered:
                round.pushCounts.delivered += 1
                recordDelivery(entry.device, alertID: alertID, nowMs: nowMs, &round)
                if isCurrent { round.outbox[key] = .some(nil) }
            case .tokenRejected:
                round.pushCounts.rejected += 1
                if registration(entry.device, round)?.apnsToken != token, owns(entry.device, round) {
                    // The device registered a new token while this one was on its way: the refusal is the old
                    // token's, and the alert goes to the new one.
                    tracked.removeValue(forKey: key)
                    track(key, entry.device)
                    continue
                }
                if isCurrent { round.outbox[key] = .some(nil) }
                disable(entry.device, token: token, reason: response.reason.isEmpty ? "HTTP \(response.status)" : response.reason,
                        nowMs: nowMs, &round)
            case .rejected:
                round.pushCounts.rejected += 1
                if isCurrent { round.outbox[key] = .some(nil) }
                logger.warning("APNs refused an alert", [
                    "device": entry.device.rawValue, "apns_id": response.request.apnsID, "status": "\(response.status)",
                    "reason": response.reason,
                ])
            case .expired:
                round.pushCounts.expired += 1
                if isCurrent { round.outbox[key] = .some(nil) }
            case .retry:
                guard isCurrent else { break }
                entry.attempts += 1
                let delay = backoff(attempt: entry.attempts)
                if nowMs + delay.inMilliseconds >= expiresAtMs {
                    round.pushCounts.expired += 1
                    round.outbox[key] = .some(nil)
                    tracked.removeValue(forKey: key)
                } else {
                    round.pushCounts.retried += 1
                    entry.phase = .waiting
                    tracked[key] = entry
                    retries.schedule(key, at: MonotonicClock.nanoseconds() + delay.inNanoseconds)
                }
                continue
            }
            // Answered for good. A newer alert that replaced this one while it was on its way goes next.
            tracked.removeValue(forKey: key)
            if current != nil && !isCurrent {
                track(key, entry.device)
            }
        }
    }

    /// The wait before retry number `attempt` (1 for the first): initial × 2^(attempt−1), at most the cap, of
    /// which a random half is taken off so that notifications failed together do not all return together.
    func backoff(attempt: Int) -> Duration {
        let full = BackoffCeiling.of(base: configuration.initialBackoff.inMilliseconds,
                                     cap: configuration.maxBackoff.inMilliseconds, doublings: attempt - 1)
        let half = full / 2
        return .milliseconds(half + Int64.random(in: 0...max(0, full - half), using: &generator))
    }

    private func recordDelivery(_ device: DeviceID, alertID: String, nowMs: Int64, _ round: inout AlertWorker.Round) {
        guard var registration = registration(device, round) else { return }
        registration.delivered += 1
        registration.lastDeliveredAlertID = alertID
        registration.lastDeliveredAtMs = nowMs
        round.registrations[device] = .some(registration)
    }

    private func disable(_ device: DeviceID, token: String, reason: String, nowMs: Int64, _ round: inout AlertWorker.Round) {
        // A device that registered a new token meanwhile keeps it: the refusal was about the old one.
        guard var registration = registration(device, round), registration.apnsToken == token,
              registration.status == .active else { return }
        registration.status = .disabled
        registration.disabledReason = reason
        registration.disabledAtMs = nowMs
        round.registrations[device] = .some(registration)
        logger.notice("push disabled for a device: APNs refused its token", [
            "device": device.rawValue, "token": PushToken.abbreviate(token), "reason": reason,
        ])
    }

    // MARK: apns-id

    /// The alert's id when it is a UUID (every alert id the engine makes is), else a UUID made from a hash of it,
    /// so the same outbox entry is always sent with the same apns-id.
    static func apnsID(alertID: String) -> String {
        if HexText.canonicalUUID(Array(alertID.utf8)) == alertID { return alertID }
        let high = AlertNotification.fnv1a(alertID)
        let low = AlertNotification.fnv1a("apns-id:" + alertID)
        let hex = String(high, radix: 16).leftPadded(to: 16) + String(low, radix: 16).leftPadded(to: 16)
        let characters = Array(hex)
        return String(characters[0..<8]) + "-" + String(characters[8..<12]) + "-" + String(characters[12..<16]) + "-"
            + String(characters[16..<20]) + "-" + String(characters[20..<32])
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

/// Retries waiting for their time: a min-heap of due instants (`MonotonicClock` nanoseconds).
struct RetrySchedule {
    private var heap: [(due: Int64, key: [UInt8])] = []

    var count: Int { heap.count }

    var earliest: Int64? { heap.first?.due }

    mutating func schedule(_ key: [UInt8], at due: Int64) {
        heap.append((due, key))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The keys due at `now`, earliest first.
    mutating func popDue(now: Int64) -> [[UInt8]] {
        var due: [[UInt8]] = []
        while let first = heap.first, first.due <= now {
            due.append(first.key)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].due < heap[smallest].due { smallest = left }
                if right < heap.count && heap[right].due < heap[smallest].due { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return due
    }
}
